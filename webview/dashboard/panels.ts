// The non-chart parts of the dashboard, each a function from host data to DOM. Everything a run
// wrote (names, class names, checkpoint paths, messages, traces) goes in as text.
import type { AmpHealth, DashboardHeader, EvalBlock, RunData, RunNotice } from '../../src/shared/dashboard';
import { fill, h } from './dom';
import { formatDuration, formatPercent, formatScale } from './series';

function stateOf(header: DashboardHeader): string {
  return header.status ?? header.phase;
}

function field(label: string, value: string | Node, extra: Record<string, string> = {}): HTMLElement {
  return h('div', { class: 'field', ...extra }, h('span', { class: 'field-label' }, label), h('span', { class: 'field-value' }, value));
}

/** Seconds since the run started, to its last event once it is over. */
export function elapsedS(header: DashboardHeader, nowS: number): number | null {
  if (header.startedAt === undefined) return null;
  const end = header.status || header.phase === 'finished' || header.phase === 'lost' ? (header.lastEventAt ?? nowS) : nowS;
  return Math.max(0, end - header.startedAt);
}

export function renderHeader(el: HTMLElement, header: DashboardHeader, nowS: number): void {
  const state = stateOf(header);
  const step = header.step ?? 0;
  const total = header.totalSteps ?? 0;
  const progress = h('vscode-progress-bar', { 'aria-label': 'training progress', max: total || 1, value: total ? step : undefined });
  const amp = [header.ampLevel, header.lossScaleMode ? `loss scale ${header.lossScaleMode}` : undefined].filter(Boolean).join(', ');
  const best =
    header.bestValAcc === null || header.bestValAcc === undefined
      ? '–'
      : `${formatPercent(header.bestValAcc)}${header.bestCheckpoint ? ` (${header.bestCheckpoint})` : ''}`;
  fill(
    el,
    h(
      'div',
      { class: 'title-row' },
      h('h1', { class: 'run-name' }, header.name),
      h('span', { class: `state state-${state}`, 'data-state': state, role: 'status' }, state),
    ),
    h(
      'div',
      { class: 'fields' },
      field('Target', header.target),
      field('Backbone', header.backbone ?? '–'),
      field('AMP', amp || '–'),
      field('Epoch', header.epoch !== undefined ? `${header.epoch}${header.totalEpochs ? ` / ${header.totalEpochs}` : ''}` : '–'),
      field('Step', header.step !== undefined ? `${header.step}${total ? ` / ${total}` : ''}` : '–'),
      field('Elapsed', formatDuration(elapsedS(header, nowS)), { 'data-field': 'elapsed' }),
      field('ETA', header.status ? '–' : formatDuration(header.etaS ?? null)),
      field('Best val acc', best, { 'data-field': 'best' }),
    ),
    progress,
  );
}

/** The finished run's outcome; a failure shows its error and trace. */
export function renderFinal(el: HTMLElement, header: DashboardHeader): void {
  el.hidden = !header.status && header.phase !== 'lost';
  if (el.hidden) return fill(el);
  const status = header.status ?? 'lost';
  const headline =
    status === 'completed'
      ? 'Run completed.'
      : status === 'stopped'
        ? 'Run stopped.'
        : status === 'lost'
          ? 'The training process is gone without finishing the run.'
          : 'Run failed.';
  const err = header.error;
  el.className = `final card final-${status}`;
  fill(
    el,
    h('strong', {}, headline),
    header.bestValAcc !== null && header.bestValAcc !== undefined ? h('span', { class: 'final-acc' }, ` Best val accuracy ${formatPercent(header.bestValAcc)}.`) : null,
    err ? h('p', { class: 'error-summary' }, h('code', {}, err.kind), ': ', err.message) : null,
    err?.fix ? h('p', { class: 'error-fix' }, 'Fix', err.path ? ` (${err.path})` : '', ': ', err.fix) : null,
    err?.traceTail ? h('details', {}, h('summary', {}, 'Traceback (last lines)'), h('pre', {}, err.traceTail)) : null,
  );
}

export function renderAmp(el: HTMLElement, amp: AmpHealth, mode: string | undefined): void {
  const diag = amp.diagnosis.length ? amp.diagnosis : [];
  fill(
    el,
    h('h3', {}, 'AMP health'),
    h(
      'div',
      { class: 'fields' },
      field('Loss scaling', mode ?? '–'),
      field('Current scale', formatScale(amp.currentScale)),
      field(`Overflows, last ${amp.window} steps`, String(amp.overflowsRecent)),
      field('Overflows, total', String(amp.overflowsTotal), { 'data-field': 'overflows-total' }),
      field('Skipped updates', String(amp.skippedTotal)),
    ),
    h(
      'ul',
      { class: 'diagnosis' },
      ...diag.map((d) =>
        h(
          'li',
          { class: `diag diag-${d.severity}`, 'data-code': d.code },
          h('span', { class: 'sev' }, d.severity),
          ' ',
          d.message,
          d.fix ? h('div', { class: 'fix' }, 'Fix: ', d.fix) : null,
        ),
      ),
    ),
  );
}

export function renderNotices(el: HTMLElement, runs: readonly RunData[]): number {
  const all: (RunNotice & { run: string })[] = runs.flatMap((r) => r.notices.map((n) => ({ ...n, run: r.header.name })));
  all.sort((a, b) => a.t - b.t);
  if (all.length === 0) {
    fill(el, h('p', { class: 'empty' }, 'No warnings or errors.'));
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
          h('span', { class: 'sev' }, n.level),
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
    fill(el, h('p', { class: 'empty' }, 'Per-class accuracy appears after the first evaluation.'));
    return;
  }
  const cols = Array.from({ length: Math.min(n, maxEpochs) }, (_, i) => n - 1 - i);
  const rows = classes.slice(0, 2000).map((name, c) =>
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
      h('caption', {}, `Per-class validation accuracy (recall), epochs ${evals.epochs[cols.at(-1)!]}–${evals.epochs[cols[0]]}`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Class'), ...cols.map((r) => h('th', { scope: 'col' }, `Epoch ${evals.epochs[r]}`)))),
      h('tbody', {}, ...rows),
    ),
    classes.length > 2000 ? h('p', { class: 'empty' }, `First 2000 of ${classes.length} classes.`) : null,
  );
}

/** Compare mode: one line per run with its colour, state and best accuracy. */
export function renderCompareHeader(el: HTMLElement, runs: readonly RunData[], colors: readonly string[]): void {
  fill(
    el,
    h('h1', { class: 'run-name' }, `Comparing ${runs.length} runs`),
    h(
      'ul',
      { class: 'compare-runs' },
      ...runs.map((r, i) =>
        h(
          'li',
          {},
          h('span', { class: 'swatch', 'data-color': String(i) }),
          h('strong', {}, r.header.name),
          ` ${stateOf(r.header)}, step ${r.header.step ?? 0}${r.header.totalSteps ? `/${r.header.totalSteps}` : ''}, best ${formatPercent(r.header.bestValAcc ?? null)}, loss scale ${formatScale(r.amp.currentScale)}`,
        ),
      ),
    ),
  );
  // Colours through CSSOM, not a style attribute (the page's CSP allows no inline styles).
  el.querySelectorAll<HTMLElement>('.swatch').forEach((s) => (s.style.background = colors[Number(s.dataset.color) % colors.length]));
}
