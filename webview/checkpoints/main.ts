// The checkpoint explorer UI (dist/webview/checkpoints.js + .css), in a VS Code webview. It draws the
// host's snapshot (src/shared/checkpointsProtocol.ts) and sends back what the user asks for. Every
// text from a run (names, classes, paths) goes in through textContent, never as HTML.
import './explorer.css'; // esbuild bundles it into dist/webview/checkpoints.css
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import {
  isHostMessage,
  type CheckpointRow,
  type CompareView,
  type EvalView,
  type ExplorerState,
  type TensorsView,
  type UiMessage,
} from '../../src/shared/checkpointsProtocol';

declare function acquireVsCodeApi(): { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void };
const vscode = acquireVsCodeApi();
const send = (m: UiMessage) => vscode.postMessage(m);

type SortKey = 'name' | 'epoch' | 'step' | 'valAcc' | 'valLoss' | 'loss' | 'bytes' | 'createdAt' | 'evalAcc';
interface UiState {
  sort: SortKey;
  desc: boolean;
  picked: string[];
  keepNewest: number;
}
const ui: UiState = {
  sort: 'step',
  desc: true,
  picked: [],
  keepNewest: 2,
  ...((vscode.getState() as Partial<UiState> | null) ?? {}),
};
const saveUi = () => vscode.setState(ui);
let state: ExplorerState | null = null;

type Child = Node | string | null | undefined | false;
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { class?: string; title?: string; onclick?: (e: Event) => void } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props.class) e.className = props.class;
  if (props.title) e.title = props.title;
  if (props.onclick) e.addEventListener('click', props.onclick);
  for (const c of children)
    if (c !== null && c !== undefined && c !== false) e.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return e;
}

function button(
  label: string,
  onClick: () => void,
  opts: { secondary?: boolean; disabled?: boolean; title?: string } = {},
): HTMLElement {
  const b = document.createElement('vscode-button');
  b.textContent = label;
  if (opts.secondary) b.setAttribute('secondary', '');
  if (opts.disabled) b.setAttribute('disabled', '');
  if (opts.title) b.title = opts.title;
  b.addEventListener('click', () => {
    if (!b.hasAttribute('disabled')) onClick();
  });
  return b;
}

const pct = (v: number | null) => (v === null ? '' : `${(v * 100).toFixed(1)}%`);
const fix = (v: number | null, d = 4) => (v === null ? '' : Number(v.toPrecision(d)).toString());
const bytes = (n: number | null) => {
  if (n === null) return '?';
  const u = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < u.length - 1) {
    v /= 1000;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : 1)} ${u[i]}`;
};
const age = (t: number | null) => {
  if (t === null) return '';
  const s = Math.max(0, Date.now() / 1000 - t);
  return s < 60
    ? `${Math.round(s)} s`
    : s < 3600
      ? `${Math.round(s / 60)} min`
      : s < 86400
        ? `${Math.round(s / 3600)} h`
        : `${Math.round(s / 86400)} d`;
};

function header(s: ExplorerState): HTMLElement {
  const r = s.run;
  return el(
    'div',
    {},
    el('h2', {}, `${r.name}`, el('span', { class: 'muted' }, `  ${r.runId} · ${r.target}${r.live ? ' · live' : ''}`)),
    el(
      'div',
      { class: 'muted' },
      [
        r.backbone,
        r.pretrained ? `from ${r.pretrained}` : 'from random initialization',
        r.freeze ? `freeze ${r.freeze}` : '',
        r.classes.length ? `${r.classes.length} classes` : '',
      ]
        .filter(Boolean)
        .join(' · '),
    ),
    s.busy ? el('div', { class: 'busy' }, document.createElement('vscode-progress-ring'), ` ${s.busy}`) : null,
    s.error ? el('div', { class: 'error', title: 'The last action failed' }, s.error) : null,
    ...s.problems.map((p) => el('div', { class: 'bad' }, `⚠ ${p.label}: ${p.message}`)),
  );
}

const COLUMNS: { key: SortKey; label: string; num?: boolean; cell: (r: CheckpointRow) => string }[] = [
  { key: 'name', label: 'Checkpoint', cell: (r) => r.name },
  { key: 'epoch', label: 'Epoch', num: true, cell: (r) => String(r.epoch ?? '') },
  { key: 'step', label: 'Step', num: true, cell: (r) => String(r.step ?? '') },
  { key: 'valAcc', label: 'Val acc', num: true, cell: (r) => pct(r.valAcc) },
  { key: 'valLoss', label: 'Val loss', num: true, cell: (r) => fix(r.valLoss) },
  { key: 'loss', label: 'Loss', num: true, cell: (r) => fix(r.loss) },
  { key: 'bytes', label: 'Size', num: true, cell: (r) => bytes(r.bytes) },
  { key: 'createdAt', label: 'Age', num: true, cell: (r) => age(r.createdAt) },
  { key: 'evalAcc', label: 'Eval acc', num: true, cell: (r) => pct(r.evalAcc) },
];

function sortedRows(rows: CheckpointRow[]): CheckpointRow[] {
  const k = ui.sort;
  return [...rows].sort((a, b) => {
    const x = a[k];
    const y = b[k];
    if (x === y) return 0;
    if (x === null) return 1; // unknowns last, either direction
    if (y === null) return -1;
    const c = typeof x === 'string' ? x.localeCompare(String(y)) : (x as number) - (y as number);
    return ui.desc ? -c : c;
  });
}

function checkpointsTable(s: ExplorerState): HTMLElement {
  const head = el(
    'tr',
    {},
    el('th', { title: 'Pick two to compare' }, '⇄'),
    el('th', {}, ''),
    ...COLUMNS.map((c) =>
      el(
        'th',
        {
          class: c.num ? 'num' : undefined,
          title: 'Sort',
          onclick: () => {
            ui.desc = ui.sort === c.key ? !ui.desc : c.key !== 'name';
            ui.sort = c.key;
            saveUi();
            render();
          },
        },
        c.label + (ui.sort === c.key ? (ui.desc ? ' ▼' : ' ▲') : ''),
      ),
    ),
    el('th', {}, 'Status'),
  );
  const body = sortedRows(s.rows).map((r) => {
    const box = el('input');
    box.type = 'checkbox';
    box.checked = ui.picked.includes(r.file);
    box.addEventListener('click', (e) => {
      e.stopPropagation();
      ui.picked = box.checked
        ? [...ui.picked.filter((f) => f !== r.file), r.file].slice(-2)
        : ui.picked.filter((f) => f !== r.file);
      saveUi();
      render();
    });
    const status = r.problem
      ? el('span', { class: 'bad' }, `✖ ${r.problem}`)
      : el(
          'span',
          { class: 'muted' },
          [r.reason, ...r.exports.map((x) => x.format.toUpperCase())].filter(Boolean).join(' · '),
        );
    const tr = el(
      'tr',
      {
        class: `row${s.selected === r.file ? ' selected' : ''}`,
        onclick: () => send({ type: 'select', file: r.file }),
      },
      el('td', {}, box),
      el('td', { class: 'star', title: r.best ? 'Best validation accuracy' : undefined }, r.best ? '★' : ''),
      ...COLUMNS.map((c) => el('td', { class: c.num ? 'num' : undefined }, c.cell(r))),
      el('td', {}, status),
    );
    return tr;
  });
  const picked = ui.picked.filter((f) => s.rows.some((r) => r.file === f));
  return el(
    'div',
    {},
    el('h3', {}, `Checkpoints (${s.rows.length})`),
    el('table', {}, el('thead', {}, head), el('tbody', {}, ...body)),
    el(
      'div',
      { class: 'bar' },
      button(
        `Compare ${picked.length === 2 ? 'the two picked' : '(pick two)'}`,
        () => send({ type: 'compare', a: picked[0], b: picked[1] }),
        { disabled: picked.length !== 2 },
      ),
      button('Refresh', () => send({ type: 'refresh' }), { secondary: true }),
      pruneControl(),
    ),
  );
}

function pruneControl(): HTMLElement {
  const n = el('input');
  n.type = 'number';
  n.min = '1';
  n.value = String(ui.keepNewest);
  n.style.width = '4em';
  n.addEventListener('change', () => {
    const v = Number(n.value);
    if (Number.isInteger(v) && v >= 1) {
      ui.keepNewest = v;
      saveUi();
    }
  });
  return el(
    'span',
    {},
    button('Prune: keep best + newest', () => send({ type: 'prune', keepNewest: ui.keepNewest }), {
      secondary: true,
      title: 'Lists what goes and asks first; the best is always kept',
    }),
    ' ',
    n,
  );
}

function actions(s: ExplorerState, r: CheckpointRow): HTMLElement {
  const f = r.file;
  return el(
    'div',
    { class: 'bar' },
    button('Evaluate on val set', () => send({ type: 'evaluate', file: f, data: 'val' })),
    button('Evaluate on folder…', () => send({ type: 'evaluate', file: f, data: 'pick' }), { secondary: true }),
    button('Export MindIR', () => send({ type: 'export', file: f, format: 'mindir' }), { secondary: true }),
    button('Export ONNX', () => send({ type: 'export', file: f, format: 'onnx' }), { secondary: true }),
    button('Resume from it', () => send({ type: 'action', action: 'resume', file: f }), { secondary: true }),
    button('Fine-tune from it', () => send({ type: 'action', action: 'fineTune', file: f }), { secondary: true }),
    s.run.ssh
      ? button('Download', () => send({ type: 'action', action: 'download', file: f }), { secondary: true })
      : button('Reveal', () => send({ type: 'action', action: 'reveal', file: f }), { secondary: true }),
    button('Copy path', () => send({ type: 'action', action: 'copyPath', file: f }), { secondary: true }),
    button('Delete…', () => send({ type: 'action', action: 'delete', file: f }), { secondary: true }),
  );
}

function tensorsSection(t: TensorsView, classes: string[]): HTMLElement {
  const groups = new Map<string, TensorsView['tensors']>();
  for (const x of t.tensors) groups.set(x.module, [...(groups.get(x.module) ?? []), x]);
  const mark = (v: boolean | null) => (v === true ? 'trained' : v === false ? 'frozen' : '');
  const head =
    t.headOut === null
      ? null
      : el(
          'div',
          { class: t.headMatchesClasses === false ? 'bad' : t.headMatchesClasses ? 'ok' : 'muted' },
          t.headMatchesClasses === false
            ? `✖ The head outputs ${t.headOut} classes, the run has ${classes.length}`
            : `${t.headMatchesClasses ? '✔ ' : ''}The head outputs ${t.headOut} classes${classes.length ? ` (the run has ${classes.length})` : ''}`,
        );
  const modules = [...groups].map(([m, list]) => {
    const els = list.reduce((a, x) => a + x.elements, 0);
    const kinds = new Set(list.map((x) => x.trainable));
    const summary = kinds.size === 1 ? mark(list[0].trainable) : 'mixed';
    const rows = list.map((x) =>
      el(
        'tr',
        { class: x.trainable === false ? 'frozen' : undefined },
        el('td', {}, x.name),
        el('td', {}, `[${x.shape.join(', ')}]`),
        el('td', {}, x.dtype),
        el('td', { class: 'num' }, x.elements.toLocaleString()),
        el('td', {}, mark(x.trainable)),
      ),
    );
    const d = el(
      'details',
      {},
      el(
        'summary',
        {},
        el('span', { class: 'module' }, m),
        ` ${list.length} tensors · ${els.toLocaleString()} values${summary ? ` · ${summary}` : ''}`,
      ),
      el('table', {}, el('tbody', {}, ...rows)),
    );
    return d;
  });
  return el(
    'div',
    {},
    el('h3', {}, `Tensors of ${t.file.split('/').pop()} (${t.tensors.length}, ${t.total.toLocaleString()} values)`),
    head,
    ...modules,
  );
}

function evalSection(e: EvalView): HTMLElement {
  const per = el(
    'table',
    {},
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', {}, 'Class'),
        el('th', { class: 'num' }, 'Precision'),
        el('th', { class: 'num' }, 'Recall'),
        el('th', { class: 'num' }, 'Support'),
      ),
    ),
    el(
      'tbody',
      {},
      ...e.perClass.map((p) =>
        el(
          'tr',
          {},
          el('td', {}, p.class),
          el('td', { class: 'num' }, pct(p.precision)),
          el('td', { class: 'num' }, pct(p.recall)),
          el('td', { class: 'num' }, String(p.support)),
        ),
      ),
    ),
  );
  const max = Math.max(1, ...e.confusion.flat());
  const cm = el(
    'table',
    { class: 'cm' },
    el(
      'thead',
      {},
      el('tr', {}, el('th', {}, 'true \\ predicted'), ...e.classes.map((c) => el('th', { title: c }, c))),
    ),
    el(
      'tbody',
      {},
      ...e.confusion.map((row, i) =>
        el(
          'tr',
          {},
          el('th', {}, e.classes[i] ?? String(i)),
          ...row.map((v, j) => {
            const td = el('td', { title: `${e.classes[i]} → ${e.classes[j]}: ${v}` }, String(v));
            // CSSOM, not a style attribute: allowed under the page's CSP.
            td.style.backgroundColor = `rgba(${i === j ? '60, 160, 90' : '200, 80, 60'}, ${(0.08 + 0.6 * (v / max)).toFixed(2)})`;
            return td;
          }),
        ),
      ),
    ),
  );
  return el(
    'div',
    {},
    el('h3', {}, `Evaluation of ${e.file.split('/').pop()}`),
    el(
      'div',
      {},
      `Accuracy ${pct(e.accuracy)} · loss ${fix(e.loss)} · ${e.numImages} images in ${e.data}${e.skipped ? ` · ${e.skipped} skipped` : ''}${e.evaluatedAt ? ` · ${new Date(e.evaluatedAt * 1000).toLocaleString()}` : ''}`,
    ),
    per,
    el('div', { class: 'muted' }, 'Confusion matrix (rows: true class, columns: predicted)'),
    cm,
  );
}

function compareSection(c: CompareView): HTMLElement {
  const frozenOk = c.frozenMaxL2 === null ? null : c.frozenMaxL2 === 0;
  return el(
    'div',
    {},
    el('h3', {}, `${c.a.split('/').pop()} vs ${c.b.split('/').pop()}`),
    el(
      'div',
      {},
      `${c.changed} changed, ${c.unchanged} unchanged`,
      c.onlyInA.length ? ` · only in A: ${c.onlyInA.length}` : '',
      c.onlyInB.length ? ` · only in B: ${c.onlyInB.length}` : '',
      c.shapeMismatch.length ? ` · shape differs: ${c.shapeMismatch.join(', ')}` : '',
    ),
    frozenOk === null
      ? null
      : el(
          'div',
          { class: frozenOk ? 'ok' : 'bad' },
          frozenOk
            ? '✔ The frozen part is unchanged (max L2 distance 0): freezing worked.'
            : `✖ The frozen part changed (max L2 distance ${c.frozenMaxL2}).`,
        ),
    el(
      'table',
      {},
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          el('th', {}, 'Tensor'),
          el('th', {}, 'Shape'),
          el('th', { class: 'num' }, 'L2 of difference'),
          el('th', { class: 'num' }, 'Relative change'),
          el('th', {}, ''),
        ),
      ),
      el(
        'tbody',
        {},
        ...c.tensors.map((t) =>
          el(
            'tr',
            { class: t.frozen ? 'frozen' : undefined },
            el('td', {}, t.name),
            el('td', {}, `[${t.shape.join(', ')}]`),
            el('td', { class: 'num' }, fix(t.l2)),
            el('td', { class: 'num' }, pct(t.rel)),
            el('td', {}, t.frozen ? 'frozen' : t.frozen === false ? 'trained' : ''),
          ),
        ),
      ),
    ),
  );
}

function render(): void {
  const root = document.getElementById('app')!;
  if (!state) return;
  const s = state;
  const sel = s.rows.find((r) => r.file === s.selected);
  const parts: Child[] = [
    header(s),
    s.rows.length ? checkpointsTable(s) : el('p', {}, s.busy ? '' : 'This run has no checkpoints yet.'),
    sel
      ? el('div', {}, el('h3', {}, `Selected: ${sel.name}`), actions(s, sel))
      : s.rows.length
        ? el('p', { class: 'muted' }, 'Click a checkpoint for its tensors and actions.')
        : null,
    s.comparison ? compareSection(s.comparison) : null,
    s.evaluation && s.evaluation.file === s.selected ? evalSection(s.evaluation) : null,
    s.tensors && s.tensors.file === s.selected ? tensorsSection(s.tensors, s.run.classes) : null,
  ];
  root.replaceChildren(...parts.filter((p): p is Node => p instanceof Node));
}

window.addEventListener('message', (e: MessageEvent) => {
  if (!isHostMessage(e.data)) return;
  state = e.data.state;
  render();
});
send({ type: 'ready' });
