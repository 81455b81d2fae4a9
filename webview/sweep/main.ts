// The Sweep panel UI (dist/webview/sweep.js + .css), in a VS Code webview: the host's sweep-status
// snapshot (src/shared/sweepProtocol.ts) as a trials table with the best trial highlighted, Optuna's
// parameter importances as bars, and a parallel-coordinates chart (params -> objective) drawn as SVG.
// Text from the data goes in through textContent, never as HTML. Words are in the display language
// (the host's bundle on <body>, webview/shared/l10n.ts); parameter names, metric keys, the sampler's
// and pruner's names stay as the runner writes them.
import './sweep.css'; // esbuild bundles it into dist/webview/sweep.css
import {
  isSweepHostMessage,
  type SweepPanelState,
  type SweepStatus,
  type SweepTrial,
  type SweepUiMessage,
} from '../../src/shared/sweepProtocol';
import { formatPercent } from '../dashboard/series';
import { localNumber } from '../dashboard/words';
import * as l10n from '../shared/l10n';
import { directionWord, sweepStateWord, trialWord } from './words';

declare function acquireVsCodeApi(): { postMessage(m: unknown): void };
const vscode = acquireVsCodeApi();
const send = (m: SweepUiMessage) => vscode.postMessage(m);

type Child = Node | string | null | undefined | false;
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { class?: string; title?: string; id?: string; onclick?: () => void } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props.class) e.className = props.class;
  if (props.title) e.title = props.title;
  if (props.id) e.id = props.id;
  if (props.onclick) e.addEventListener('click', props.onclick);
  for (const c of children)
    if (c !== null && c !== undefined && c !== false) e.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return e;
}

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A parameter's or objective's value: short numbers grouped for the display language, tiny and huge ones as 1.00e-4. */
function fmt(v: number | string | boolean | null): string {
  if (v === null) return '–';
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return localNumber(v);
  return Math.abs(v) < 1e-2 || Math.abs(v) >= 1e4 ? v.toExponential(2) : localNumber(Number(v.toFixed(4)));
}

/** The value a trial shows on the objective axis: its value, or for a pruned trial the best it reported. */
export function plottedValue(t: SweepTrial, maximize: boolean): number | null {
  if (t.state === 'COMPLETE') return t.value;
  if (t.state !== 'PRUNED') return null;
  const vs = t.reported.map(([, v]) => v).filter((v): v is number => v !== null);
  if (!vs.length) return null;
  return maximize ? Math.max(...vs) : Math.min(...vs);
}

function paramNames(s: SweepStatus): string[] {
  const names = new Set<string>();
  for (const t of s.trials) for (const k of Object.keys(t.params)) names.add(k);
  return [...names].sort();
}

function header(st: SweepPanelState, s: SweepStatus): HTMLElement {
  const c = s.counts;
  return el(
    'div',
    {},
    el(
      'div',
      { class: 'header' },
      el('h1', {}, l10n.t('Sweep {0}', s.name)),
      el('span', { id: 'state' }, sweepStateWord(s.state)),
      el('span', { class: 'muted' }, l10n.t('{0}/{1} trials', c.counted, s.trials_target)),
      el(
        'span',
        { class: 'muted' },
        l10n.t('{0} completed · {1} pruned · {2} failed · {3} running', c.complete, c.pruned, c.fail, c.running),
      ),
      el(
        'span',
        { class: 'muted' },
        l10n.t('objective {0} ({1})', s.objective.metric, directionWord(s.objective.direction)),
      ),
      el(
        'span',
        { class: 'muted' },
        s.pruner
          ? l10n.t('{0} sampler · {1} pruner · {2}', s.sampler ?? '?', s.pruner, st.target)
          : l10n.t('{0} sampler · no pruner · {1}', s.sampler ?? '?', st.target),
      ),
    ),
    el(
      'div',
      { class: 'actions' },
      el(
        'button',
        {
          id: 'fine-tune-best',
          title: s.best
            ? l10n.t("Start a fine-tune from trial {0}'s best checkpoint", s.best.number)
            : l10n.t('No trial has completed yet'),
          onclick: () => send({ type: 'fineTuneBest' }),
        },
        l10n.t('Fine-tune from best'),
      ),
      el(
        'button',
        {
          id: 'open-table',
          title: l10n.t("The Runs Table of this sweep's trials"),
          onclick: () => send({ type: 'openTable' }),
        },
        l10n.t('Runs Table'),
      ),
      s.state === 'running' &&
        el('button', { id: 'stop', onclick: () => send({ type: 'stop' }) }, l10n.t('Stop Sweep')),
    ),
  );
}

function trialsTable(s: SweepStatus, names: string[]): HTMLElement {
  const head = el(
    'tr',
    {},
    el('th', {}, '#'),
    el('th', {}, l10n.t('state')),
    ...names.map((n) => el('th', {}, n)),
    el('th', {}, s.objective.metric),
    el('th', {}, l10n.t('pruned at epoch')),
    el('th', {}, l10n.t('run')),
  );
  const rows = s.trials.map((t) => {
    const best = s.best?.number === t.number;
    const row = el(
      'tr',
      { class: best ? 'trial best' : 'trial', title: t.reason ?? '' },
      el('td', { class: 'num' }, localNumber(t.number)),
      el('td', {}, trialWord(t.outcome ?? t.state.toLowerCase())),
      ...names.map((n) => el('td', { class: typeof t.params[n] === 'number' ? 'num' : '' }, fmt(t.params[n] ?? null))),
      el('td', { class: 'num' }, fmt(t.value)),
      el('td', { class: 'num' }, t.pruned_at === null ? '' : localNumber(t.pruned_at)),
      el('td', {}, t.run_id ? el('a', { onclick: () => send({ type: 'openTrial', number: t.number }) }, t.run_id) : ''),
    );
    row.dataset.number = String(t.number);
    return row;
  });
  return el('table', { class: 'trials', id: 'trials' }, el('thead', {}, head), el('tbody', {}, ...rows));
}

function importances(s: SweepStatus): HTMLElement {
  if (!s.importances)
    return el(
      'p',
      { class: 'muted', id: 'importances' },
      l10n.t('Parameter importances show once two trials have completed.'),
    );
  const sorted = Object.entries(s.importances).sort((a, b) => b[1] - a[1]);
  const top = sorted[0]?.[1] || 1;
  const grid = el('div', { class: 'importance', id: 'importances' });
  for (const [name, v] of sorted) {
    const bar = el('div', { class: 'bar' });
    bar.style.width = `${Math.max(1, (100 * v) / top)}%`;
    bar.dataset.param = name;
    grid.append(el('span', {}, name), el('div', {}, bar), el('span', { class: 'muted' }, formatPercent(v)));
  }
  return grid;
}

type Axis = { name: string; pos: (v: number | string | boolean | null) => number | null; ticks: [number, string][] };

/** An axis over the values seen: log for a positive numeric range over two decades, else linear or categorical. */
function axis(name: string, values: (number | string | boolean | null)[], h: number): Axis {
  const nums = values.filter((v): v is number => typeof v === 'number');
  if (nums.length === values.length && nums.length > 0) {
    let lo = Math.min(...nums);
    let hi = Math.max(...nums);
    const log = lo > 0 && hi / lo > 100;
    const f = (v: number) => (log ? Math.log10(v) : v);
    if (lo === hi) {
      // One value seen (two trials tied): a small band around it, not a unit either side.
      const pad = Math.abs(lo) * 0.1 || 0.1;
      [lo, hi] = [lo - pad, hi + pad];
    }
    const pos = (v: number | string | boolean | null) =>
      typeof v === 'number' ? h - ((f(v) - f(lo)) / (f(hi) - f(lo))) * h : null;
    return {
      name,
      pos,
      ticks: [
        [pos(hi)!, fmt(hi)],
        [pos(lo)!, fmt(lo)],
      ],
    };
  }
  const cats = [...new Set(values.map((v) => String(v)))].sort();
  const pos = (v: number | string | boolean | null) => {
    const i = cats.indexOf(String(v));
    return i < 0 ? null : cats.length === 1 ? h / 2 : h - (i / (cats.length - 1)) * h;
  };
  return { name, pos, ticks: cats.map((c) => [pos(c)!, c]) };
}

function parallel(s: SweepStatus, names: string[]): Element {
  const maximize = s.objective.direction === 'maximize';
  const shown = s.trials
    .map((t) => ({ t, y: plottedValue(t, maximize) }))
    .filter((x): x is { t: SweepTrial; y: number } => x.y !== null);
  if (!shown.length)
    return el('p', { class: 'muted', id: 'parallel' }, l10n.t('The chart shows once a trial has a value.'));
  const W = Math.max(420, 160 * (names.length + 1));
  const H = 220;
  const top = 24;
  const left = 60;
  const step = (W - 2 * left) / Math.max(1, names.length);
  const axes = [
    ...names.map((n) =>
      axis(
        n,
        shown.map((x) => x.t.params[n] ?? null),
        H,
      ),
    ),
    axis(
      s.objective.metric,
      shown.map((x) => x.y),
      H,
    ),
  ];
  const root = svg('svg', {
    class: 'parallel',
    id: 'parallel',
    width: W,
    height: H + top + 30,
    viewBox: `0 0 ${W} ${H + top + 30}`,
  });
  axes.forEach((a, i) => {
    const x = left + i * step;
    root.append(svg('line', { class: 'axis', x1: x, x2: x, y1: top, y2: top + H }));
    root.append(svg('text', { x, y: top - 8, 'text-anchor': 'middle' }, a.name));
    for (const [y, label] of a.ticks) root.append(svg('text', { x: x + 4, y: top + y + 4 }, label));
  });
  // Worse trials first, so the best is drawn on top.
  shown.sort((a, b) => (maximize ? a.y - b.y : b.y - a.y));
  for (const { t, y } of shown) {
    const pts = axes.map((a, i) => {
      const p = i === axes.length - 1 ? a.pos(y) : a.pos(t.params[a.name] ?? null);
      return `${left + i * step},${top + (p ?? H)}`;
    });
    const best = s.best?.number === t.number;
    const line = svg('polyline', {
      class: best ? 'line best' : 'line',
      points: pts.join(' '),
      stroke: best
        ? 'var(--vscode-charts-green, #388a34)'
        : t.state === 'PRUNED'
          ? 'var(--vscode-charts-orange, #d18616)'
          : 'var(--vscode-charts-blue, #3794ff)',
      ...(t.state === 'PRUNED' ? { 'stroke-dasharray': '4 3' } : {}),
      'data-number': t.number,
    });
    line.append(
      svg(
        'title',
        {},
        t.state === 'PRUNED'
          ? l10n.t('trial {0}: {1} (pruned)', t.number, fmt(y))
          : l10n.t('trial {0}: {1}', t.number, fmt(y)),
      ),
    );
    root.append(line);
  }
  return root;
}

function render(st: SweepPanelState): void {
  const app = document.getElementById('app')!;
  app.replaceChildren();
  if (st.error) app.append(el('div', { class: 'error', id: 'error' }, st.error));
  const s = st.status;
  if (!s) {
    app.append(el('p', { class: 'muted' }, l10n.t('Reading the sweep…')));
    return;
  }
  const names = paramNames(s);
  app.append(
    header(st, s),
    el('h2', {}, l10n.t('Trials')),
    trialsTable(s, names),
    el('h2', {}, l10n.t('Parameter importances')),
    importances(s),
    el('h2', {}, l10n.t('Parameters → objective')),
    parallel(s, names),
  );
}

l10n.loadBundleFromBody();
window.addEventListener('message', (e: MessageEvent) => {
  if (isSweepHostMessage(e.data)) render(e.data.state);
});
send({ type: 'ready' });
