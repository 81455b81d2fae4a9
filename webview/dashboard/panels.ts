// The non-chart parts of the dashboard, each a function from host data to DOM. Everything a run
// wrote (names, class names, checkpoint paths, messages, traces) goes in as text.
import type { AmpHealth, DashboardHeader, EvalBlock, RunData, RunNotice } from '../../src/shared/dashboardProtocol';
import { fill, h, setAttr, setText } from './dom';
import { renderRunNotes } from './runNotes';
import * as l10n from '../shared/l10n';
import { joined } from '../../src/shared/l10n';
import { formatDuration, formatPercent, formatScale } from './series';
import { localNumber, severityWord, stateWord } from './words';

/** The AMP card's loss-scale mode, as run_started.amp gives it. */
function lossScaleWord(mode: string): string {
  if (mode === 'dynamic') return l10n.t('dynamic');
  if (mode === 'fixed') return l10n.t('fixed');
  if (mode === 'none') return l10n.t('none');
  return mode;
}

function stateOf(header: DashboardHeader): string {
  return header.status ?? header.phase;
}

/** Seconds since the run started, to its last event once it is over. */
export function elapsedS(header: DashboardHeader, nowS: number): number | null {
  if (header.startedAt === undefined) return null;
  const end =
    header.status || header.phase === 'finished' || header.phase === 'lost' ? (header.lastEventAt ?? nowS) : nowS;
  return Math.max(0, end - header.startedAt);
}

interface HeaderView {
  name: HTMLElement;
  state: HTMLElement;
  /** The user's notes and tags (meta.json). */
  meta: HTMLElement;
  values: Record<'target' | 'backbone' | 'amp' | 'epoch' | 'step' | 'elapsed' | 'eta' | 'best', HTMLElement>;
  progress: HTMLElement;
}
const headerViews = new WeakMap<HTMLElement, HeaderView>();

/** The run's header. Built once, then only changed text is written (it changes on every append). */
export function renderHeader(el: HTMLElement, header: DashboardHeader, nowS: number): void {
  let v = headerViews.get(el);
  if (!v || !el.contains(v.name)) {
    const value = () => h('span', { class: 'field-value' });
    const built: HeaderView = {
      name: h('h1', { class: 'run-name' }),
      state: h('span', { class: 'state', role: 'status' }),
      meta: h('div', { class: 'run-meta' }),
      values: {
        target: value(),
        backbone: value(),
        amp: value(),
        epoch: value(),
        step: value(),
        elapsed: value(),
        eta: value(),
        best: value(),
      },
      progress: h('vscode-progress-bar', { 'aria-label': l10n.t('training progress') }),
    };
    const f = (label: string, key: keyof HeaderView['values'], extra: Record<string, string> = {}) =>
      h('div', { class: 'field', ...extra }, h('span', { class: 'field-label' }, label), built.values[key]);
    fill(
      el,
      h('div', { class: 'title-row' }, built.name, built.state),
      built.meta,
      h(
        'div',
        { class: 'fields' },
        f(l10n.t('Target'), 'target'),
        f(l10n.t('Backbone'), 'backbone'),
        f(l10n.t('AMP'), 'amp'),
        f(l10n.t('Epoch'), 'epoch'),
        f(l10n.t('Step'), 'step'),
        f(l10n.t('Elapsed'), 'elapsed', { 'data-field': 'elapsed' }),
        f(l10n.t('ETA'), 'eta'),
        f(l10n.t('Best val acc'), 'best', { 'data-field': 'best' }),
      ),
      built.progress,
    );
    headerViews.set(el, built);
    v = built;
  }
  const state = stateOf(header);
  const step = header.step ?? 0;
  const total = header.totalSteps ?? 0;
  // Worded by the host with the AMP card (an older host: level and mode as they are).
  const amp =
    header.ampSummary ??
    joined(
      [header.ampLevel, header.lossScaleMode ? l10n.t('loss scale {0}', header.lossScaleMode) : ''].filter(
        (x): x is string => !!x,
      ),
      l10n.t,
    );
  const best =
    header.bestValAcc === null || header.bestValAcc === undefined
      ? '–'
      : `${formatPercent(header.bestValAcc)}${header.bestCheckpoint ? ` (${header.bestCheckpoint})` : ''}`;
  setText(v.name, header.name);
  renderRunNotes(v.meta, header.notes, header.tags);
  // A run that ended with a `problems` verdict: amber words, not the green "completed".
  const problems = header.status !== undefined && header.status !== 'failed' && header.health?.verdict === 'problems';
  setAttr(v.state, 'class', `state state-${problems ? 'problems' : state}`);
  setAttr(v.state, 'data-state', state);
  setText(v.state, problems ? l10n.t('{0} with problems', stateWord(state)) : stateWord(state));
  setText(v.values.target, header.target);
  setText(v.values.backbone, header.backbone ?? '–');
  setText(v.values.amp, amp || '–');
  setText(
    v.values.epoch,
    header.epoch !== undefined ? `${header.epoch}${header.totalEpochs ? ` / ${header.totalEpochs}` : ''}` : '–',
  );
  setText(v.values.step, header.step !== undefined ? `${header.step}${total ? ` / ${total}` : ''}` : '–');
  setText(v.values.elapsed, formatDuration(elapsedS(header, nowS)));
  setText(v.values.eta, header.status ? '–' : formatDuration(header.etaS ?? null));
  setText(v.values.best, best);
  setAttr(v.progress, 'max', String(total || 1));
  setAttr(v.progress, 'value', total ? String(step) : undefined);
}

/** A value shown as text: a string as it is, anything else as JSON (never handed to the DOM as a node). */
function text(v: unknown): string {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** The finished run's outcome; a failure shows its error and trace. */
export function renderFinal(el: HTMLElement, header: DashboardHeader): void {
  const hidden = !header.status && header.phase !== 'lost';
  const problems = header.status !== 'failed' && header.health?.verdict === 'problems';
  const drawn = hidden
    ? 'hidden'
    : JSON.stringify([header.status, header.phase, header.bestValAcc, header.error, problems]);
  if (el.dataset.drawn === drawn) return;
  el.dataset.drawn = drawn;
  el.hidden = hidden;
  if (el.hidden) return fill(el);
  const status = header.status ?? 'lost';
  // Green "Run completed." only for a healthy run: with problems, amber (the reasons are in the verdict banner).
  const headline =
    status === 'completed'
      ? l10n.t('Run completed.')
      : status === 'stopped'
        ? l10n.t('Run stopped.')
        : status === 'lost'
          ? l10n.t('The training process is gone without finishing the run.')
          : l10n.t('Run failed.');
  const err = header.error;
  el.className = `final card final-${problems ? 'problems' : status}`;
  fill(
    el,
    h('strong', {}, headline),
    problems ? h('span', { class: 'final-problems-note' }, ' ', l10n.t('With problems: see the verdict above.')) : null,
    header.bestValAcc !== null && header.bestValAcc !== undefined
      ? h('span', { class: 'final-acc' }, ' ', l10n.t('Best val accuracy {0}.', formatPercent(header.bestValAcc)))
      : null,
    // Text only, whatever the host sent: a run directory can hold anything (a trace_tail object).
    err ? h('p', { class: 'error-summary' }, h('code', {}, text(err.kind)), ': ', text(err.message)) : null,
    err?.fix
      ? h(
          'p',
          { class: 'error-fix' },
          l10n.t('Fix'),
          err.path ? ` (${text(err.path)})` : '',
          l10n.t(': '),
          text(err.fix),
        )
      : null,
    err?.traceTail
      ? h('details', {}, h('summary', {}, l10n.t('Traceback (last lines)')), h('pre', {}, text(err.traceTail)))
      : null,
  );
}

interface AmpView {
  values: HTMLElement[];
  recentLabel: HTMLElement;
  diagnosis: HTMLElement;
}
const ampViews = new WeakMap<HTMLElement, AmpView>();

/** The AMP health card: built once; figures are written when they change, the diagnosis list when it does. */
export function renderAmp(el: HTMLElement, amp: AmpHealth, mode: string | undefined): void {
  if (amp.applies === false && amp.notApplicable) {
    // Loss scaling does not apply (an O0 run): one line, and only the diagnoses that are not about scaling.
    const serious = amp.diagnosis.filter((d) => d.code !== 'ok' && d.severity !== 'info');
    const drawn = JSON.stringify(['na', amp.notApplicable, serious]);
    if (el.dataset.drawn === drawn) return;
    el.dataset.drawn = drawn;
    ampViews.delete(el);
    fill(
      el,
      h('h3', {}, l10n.t('AMP health')),
      h('p', { class: 'not-applicable', 'data-field': 'amp-not-applicable' }, amp.notApplicable),
      serious.length
        ? h(
            'ul',
            { class: 'diagnosis' },
            ...serious.map((d) =>
              h(
                'li',
                { class: `diag diag-${d.severity}`, 'data-code': d.code },
                h('span', { class: 'sev' }, severityWord(d.severity)),
                ' ',
                d.message,
                d.fix ? h('div', { class: 'fix' }, l10n.t('Fix: '), d.fix) : null,
              ),
            ),
          )
        : null,
    );
    return;
  }
  delete el.dataset.drawn;
  let v = ampViews.get(el);
  if (!v || !el.contains(v.diagnosis)) {
    const values = Array.from({ length: 5 }, () => h('span', { class: 'field-value' }));
    const built: AmpView = {
      values,
      recentLabel: h('span', { class: 'field-label' }),
      diagnosis: h('ul', { class: 'diagnosis' }),
    };
    const f = (label: string | HTMLElement, i: number, extra: Record<string, string> = {}) =>
      h(
        'div',
        { class: 'field', ...extra },
        typeof label === 'string' ? h('span', { class: 'field-label' }, label) : label,
        values[i],
      );
    fill(
      el,
      h('h3', {}, l10n.t('AMP health')),
      h(
        'div',
        { class: 'fields' },
        f(l10n.t('Loss scaling'), 0),
        f(l10n.t('Current scale'), 1),
        f(built.recentLabel, 2),
        f(l10n.t('Overflows, total'), 3, { 'data-field': 'overflows-total' }),
        f(l10n.t('Skipped updates'), 4),
      ),
      built.diagnosis,
    );
    ampViews.set(el, built);
    v = built;
  }
  setText(v.values[0], mode === undefined ? '–' : lossScaleWord(mode));
  setText(v.values[1], formatScale(amp.currentScale));
  setText(v.recentLabel, l10n.t('Overflows, last {0} steps', amp.window));
  setText(v.values[2], localNumber(amp.overflowsRecent));
  setText(v.values[3], localNumber(amp.overflowsTotal));
  setText(v.values[4], localNumber(amp.skippedTotal));
  const drawn = JSON.stringify(amp.diagnosis);
  if (v.diagnosis.dataset.drawn === drawn) return;
  v.diagnosis.dataset.drawn = drawn;
  fill(
    v.diagnosis,
    ...amp.diagnosis.map((d) =>
      h(
        'li',
        { class: `diag diag-${d.severity}`, 'data-code': d.code },
        h('span', { class: 'sev' }, severityWord(d.severity)),
        ' ',
        d.message,
        d.fix ? h('div', { class: 'fix' }, l10n.t('Fix: '), d.fix) : null,
      ),
    ),
  );
}

export function renderNotices(el: HTMLElement, runs: readonly RunData[]): number {
  // Notices only grow between snapshots: rebuild the list when a run's count or last one differs.
  const count = runs.reduce((n, r) => n + r.notices.length, 0);
  const drawn = runs
    .map((r) => `${r.header.key}:${r.header.name}:${r.notices.length}:${r.notices.at(-1)?.seq ?? ''}`)
    .join('|');
  if (el.dataset.drawn === drawn) return count;
  el.dataset.drawn = drawn;
  const all: (RunNotice & { run: string })[] = runs.flatMap((r) =>
    r.notices.map((n) => ({ ...n, run: r.header.name })),
  );
  all.sort((a, b) => a.t - b.t);
  if (all.length === 0) {
    fill(el, h('p', { class: 'empty' }, l10n.t('No warnings or errors.')));
    return 0;
  }
  const multi = runs.length > 1;
  fill(
    el,
    h(
      'ul',
      { class: 'notices' },
      ...all.map((n) =>
        h(
          'li',
          { class: `notice notice-${n.level}` },
          h('span', { class: 'sev' }, severityWord(n.level)),
          ' ',
          h('code', {}, n.code),
          multi ? h('span', { class: 'notice-run' }, ` (${n.run})`) : null,
          h('div', { class: 'notice-message' }, n.message),
        ),
      ),
    ),
  );
  return all.length;
}

/** Classes down, epochs across (the last few), newest epoch first; null cells are classes without validation images. */
export function renderPerClass(el: HTMLElement, classes: readonly string[], evals: EvalBlock, maxEpochs = 6): void {
  const n = evals.steps.length;
  // A table of a thousand classes is costly to rebuild: only when an eval (or the class list) is new.
  const drawn = `${n}:${classes.length}:${evals.steps[n - 1] ?? ''}`;
  if (el.dataset.drawn === drawn) return;
  el.dataset.drawn = drawn;
  if (n === 0 || classes.length === 0) {
    fill(el, h('p', { class: 'empty' }, l10n.t('Per-class accuracy appears after the first evaluation.')));
    return;
  }
  const cols = Array.from({ length: Math.min(n, maxEpochs) }, (_, i) => n - 1 - i);
  const rows = classes
    .slice(0, 2000)
    .map((name, c) =>
      h(
        'tr',
        {},
        h('th', { scope: 'row', class: 'class-name' }, name),
        ...cols.map((r) => h('td', {}, formatPercent(evals.perClassAcc[r]?.[c] ?? null))),
      ),
    );
  fill(
    el,
    h(
      'table',
      { class: 'per-class' },
      h(
        'caption',
        {},
        l10n.t(
          'Per-class validation accuracy (recall), epochs {0}–{1}',
          evals.epochs[cols.at(-1)!],
          evals.epochs[cols[0]],
        ),
      ),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, l10n.t('Class')),
          ...cols.map((r) => h('th', { scope: 'col' }, l10n.t('Epoch {0}', evals.epochs[r]))),
        ),
      ),
      h('tbody', {}, ...rows),
    ),
    classes.length > 2000
      ? h('p', { class: 'empty' }, l10n.t('First 2000 of {0} classes.', localNumber(classes.length)))
      : null,
  );
}

/** Compare mode: one line per run with its colour, state and best accuracy. */
export function renderCompareHeader(
  el: HTMLElement,
  runs: readonly RunData[],
  colors: readonly string[],
  hidden: ReadonlySet<string>,
  onToggle: (key: string, shown: boolean) => void,
): void {
  const lines = runs.map(
    (r) =>
      ' ' +
      l10n.t('{state}, step {step}, best {best}, loss scale {scale}', {
        state: stateWord(stateOf(r.header)),
        step: `${r.header.step ?? 0}${r.header.totalSteps ? `/${r.header.totalSteps}` : ''}`,
        best: formatPercent(r.header.bestValAcc ?? null),
        scale: formatScale(r.amp.currentScale),
      }),
  );
  // each run's values of the settings that differ between the runs (the host's diff)
  const differs = runs.map((r) =>
    joined(
      (r.differs ?? []).map((d) => `${d.path}=${d.value}`),
      l10n.t,
    ),
  );
  const drawn = JSON.stringify([runs.map((r) => r.header.name), lines, differs, colors]);
  if (el.dataset.drawn === drawn && el.querySelector('.compare-runs')) {
    el.querySelectorAll<HTMLInputElement>('input[data-run]').forEach((b) => (b.checked = !hidden.has(b.dataset.run!)));
    return;
  }
  el.dataset.drawn = drawn;
  fill(
    el,
    h('h1', { class: 'run-name' }, l10n.t('Comparing {0} runs', runs.length)),
    h(
      'ul',
      { class: 'compare-runs' },
      ...runs.map((r, i) => {
        const id = `show-run-${i}`;
        const box = h('input', {
          type: 'checkbox',
          id,
          'data-run': r.header.key,
          title: l10n.t('Show {0} in the charts', r.header.name),
        }) as HTMLInputElement;
        box.checked = !hidden.has(r.header.key);
        box.addEventListener('change', () => onToggle(r.header.key, box.checked));
        return h(
          'li',
          { 'data-run-key': r.header.key },
          box,
          h(
            'label',
            { for: id },
            h('span', { class: 'swatch', 'data-color': String(i) }),
            h('strong', {}, r.header.name),
            lines[i],
          ),
          differs[i] ? h('div', { class: 'differs muted', 'data-field': 'differs' }, differs[i]) : h('span'),
        );
      }),
    ),
  );
  // Colours through CSSOM, not a style attribute (the page's CSP allows no inline styles).
  el.querySelectorAll<HTMLElement>('.swatch').forEach(
    (s) => (s.style.background = colors[Number(s.dataset.color) % colors.length]),
  );
}

/** Compare Runs' series labels: the display name and the settings that set the run apart. */
export function compareLabel(run: RunData): string {
  const d = (run.differs ?? []).slice(0, 3).map((x) => `${x.path.split('.').pop()}=${x.value}`);
  return d.length ? l10n.t('{0} ({1})', run.header.name, joined(d, l10n.t)) : run.header.name;
}
