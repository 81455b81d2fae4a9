// The checkpoint explorer UI (dist/webview/checkpoints.js + .css), in a VS Code webview. It draws the
// host's snapshot (src/shared/checkpointsProtocol.ts) and sends back what the user asks for. Every
// text from a run (names, classes, paths) goes in through textContent, never as HTML. The tensors,
// evaluation and comparison sections are in details.ts, the DOM helpers in dom.ts.
import * as l10n from '../shared/l10n';
import './explorer.css'; // esbuild bundles it into dist/webview/checkpoints.css
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import {
  isHostMessage,
  saveReason,
  type CheckpointRow,
  type ExplorerState,
  type UiMessage,
} from '../../src/shared/checkpointsProtocol';
import { compareSection, evalSection, tensorsSection } from './details';
import { gallerySection, predictionsCompareSection } from './gallery';
import { age, button, bytes, el, fix, pct, type Child } from './dom';

l10n.loadBundleFromBody(); // before the first render: every text below goes through l10n.t

declare function acquireVsCodeApi(): { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void };
const vscode = acquireVsCodeApi();
const send = (m: UiMessage) => vscode.postMessage(m);

type SortKey =
  'name' | 'epoch' | 'step' | 'valAcc' | 'valTop5' | 'valLoss' | 'loss' | 'bytes' | 'createdAt' | 'evalAcc';
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

function header(s: ExplorerState): HTMLElement {
  const r = s.run;
  return el(
    'div',
    {},
    el(
      'h2',
      {},
      `${r.name}`,
      el('span', { class: 'muted' }, `  ${r.runId} · ${r.target}${r.live ? l10n.t(' · live') : ''}`),
    ),
    runNotes(r.notes ?? '', r.tags ?? []),
    el(
      'div',
      { class: 'muted' },
      [
        r.backbone,
        r.pretrained
          ? r.weightsSha256
            ? l10n.t('from {0} (sha256 {1}…)', r.pretrained, r.weightsSha256.slice(0, 12))
            : l10n.t('from {0}', r.pretrained)
          : l10n.t('from random initialization'),
        r.weightsFirst ? l10n.t('originally {0}', r.weightsFirst) : '',
        r.preprocess ? l10n.t('preprocess {0}', r.preprocess) : '',
        r.freeze ? l10n.t('freeze {0}', r.freeze) : '',
        r.classes.length ? l10n.t('{0} classes', r.classes.length) : '',
      ]
        .filter(Boolean)
        .join(' · '),
    ),
    s.busy ? el('div', { class: 'busy' }, document.createElement('vscode-progress-ring'), ` ${s.busy}`) : null,
    s.error ? el('div', { class: 'error', title: l10n.t('The last action failed') }, s.error) : null,
    ...s.problems.map((p) => el('div', { class: 'bad' }, `⚠ ${p.label}: ${p.message}`)),
  );
}

/** Notes folded past this many lines or characters (the stylesheet clamps them to 3 lines). */
const FOLD_LINES = 3;
const FOLD_CHARS = 240;
/** The user's notes stay unfolded across snapshots while they are the same text. */
let notesOpenFor: string | null = null;

/** The user's tags as chips and notes as text (meta.json: Tag Run…, Edit Run Notes…); long notes fold. */
function runNotes(notes: string, tags: string[]): HTMLElement | null {
  const text = notes.trim();
  if (!text && tags.length === 0) return null;
  const long = text.split('\n').length > FOLD_LINES || text.length > FOLD_CHARS;
  const open = long && notesOpenFor === text;
  const p = text ? el('p', { class: `run-notes${long && !open ? ' folded' : ''}` }, text) : null;
  const toggle = long
    ? el(
        'button',
        {
          class: 'notes-toggle',
          onclick: () => {
            const nowOpen = p!.classList.toggle('folded') === false;
            notesOpenFor = nowOpen ? text : null;
            toggle!.textContent = nowOpen ? l10n.t('less') : l10n.t('more');
          },
        },
        open ? l10n.t('less') : l10n.t('more'),
      )
    : null;
  return el(
    'div',
    { class: 'run-meta' },
    tags.length
      ? el(
          'div',
          { class: 'run-tags', title: l10n.t('Tags') },
          ...tags.map((t) => el('span', { class: 'tag-chip' }, t)),
        )
      : null,
    p,
    toggle,
  );
}

const COLUMNS: { key: SortKey; label: string; num?: boolean; cell: (r: CheckpointRow) => string }[] = [
  { key: 'name', label: l10n.t('Checkpoint'), cell: (r) => r.name },
  { key: 'epoch', label: l10n.t('Epoch'), num: true, cell: (r) => String(r.epoch ?? '') },
  { key: 'step', label: l10n.t('Step'), num: true, cell: (r) => String(r.step ?? '') },
  { key: 'valAcc', label: l10n.t('Val acc'), num: true, cell: (r) => pct(r.valAcc) },
  { key: 'valTop5', label: l10n.t('Top-5'), num: true, cell: (r) => pct(r.valTop5) },
  { key: 'valLoss', label: l10n.t('Val loss'), num: true, cell: (r) => fix(r.valLoss) },
  { key: 'loss', label: l10n.t('Loss'), num: true, cell: (r) => fix(r.loss) },
  { key: 'bytes', label: l10n.t('Size'), num: true, cell: (r) => bytes(r.bytes) },
  { key: 'createdAt', label: l10n.t('Age'), num: true, cell: (r) => age(r.createdAt) },
  { key: 'evalAcc', label: l10n.t('Eval acc'), num: true, cell: (r) => pct(r.evalAcc) },
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
    el('th', { title: l10n.t('Pick two to compare') }, '⇄'),
    el('th', {}, ''),
    ...COLUMNS.map((c) =>
      el(
        'th',
        {
          class: c.num ? 'num' : undefined,
          title: l10n.t('Sort'),
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
    el('th', {}, l10n.t('Status')),
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
          [
            r.kind?.toUpperCase(),
            r.reason && saveReason(r.reason, l10n.t),
            ...r.exports.map((x) => x.format.toUpperCase()),
          ]
            .filter(Boolean)
            .join(' · '),
        );
    const tr = el(
      'tr',
      {
        class: `row${s.selected === r.file ? ' selected' : ''}`,
        onclick: () => send({ type: 'select', file: r.file }),
      },
      el('td', {}, box),
      el('td', { class: 'star', title: r.best ? l10n.t('Best validation accuracy') : undefined }, r.best ? '★' : ''),
      ...COLUMNS.map((c) => el('td', { class: c.num ? 'num' : undefined }, c.cell(r))),
      el('td', {}, status),
    );
    return tr;
  });
  const picked = ui.picked.filter((f) => s.rows.some((r) => r.file === f));
  return el(
    'div',
    {},
    el('h3', {}, l10n.t('Checkpoints ({0})', s.rows.length)),
    el('table', {}, el('thead', {}, head), el('tbody', {}, ...body)),
    el(
      'div',
      { class: 'bar' },
      button(
        picked.length === 2 ? l10n.t('Compare the two picked') : l10n.t('Compare (pick two)'),
        () => send({ type: 'compare', a: picked[0], b: picked[1] }),
        { disabled: picked.length !== 2 },
      ),
      button(l10n.t('Compare predictions'), () => send({ type: 'comparePredictions', a: picked[0], b: picked[1] }), {
        secondary: true,
        disabled: picked.length !== 2,
        title: l10n.t('The images whose prediction changed between the two (both evaluated on the same data)'),
      }),
      button(l10n.t('Refresh'), () => send({ type: 'refresh' }), { secondary: true }),
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
    button(l10n.t('Prune: keep best + newest'), () => send({ type: 'prune', keepNewest: ui.keepNewest }), {
      secondary: true,
      title: l10n.t('Lists what goes and asks first; the best is always kept'),
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
    button(l10n.t('Evaluate on val set'), () => send({ type: 'evaluate', file: f, data: 'val' })),
    button(l10n.t('Evaluate on folder…'), () => send({ type: 'evaluate', file: f, data: 'pick' }), { secondary: true }),
    button(l10n.t('Export MindIR'), () => send({ type: 'export', file: f, format: 'mindir' }), { secondary: true }),
    button(l10n.t('Export ONNX'), () => send({ type: 'export', file: f, format: 'onnx' }), { secondary: true }),
    button(l10n.t('Resume from it'), () => send({ type: 'action', action: 'resume', file: f }), { secondary: true }),
    button(l10n.t('Fine-tune from it'), () => send({ type: 'action', action: 'fineTune', file: f }), {
      secondary: true,
    }),
    button(l10n.t('Classify images…'), () => send({ type: 'action', action: 'classify', file: f }), {
      secondary: true,
      title: l10n.t('Top-5 classes of image files by this checkpoint (Classify with Checkpoint…)'),
    }),
    s.run.ssh
      ? button(l10n.t('Download'), () => send({ type: 'action', action: 'download', file: f }), { secondary: true })
      : button(l10n.t('Reveal'), () => send({ type: 'action', action: 'reveal', file: f }), { secondary: true }),
    button(l10n.t('Copy path'), () => send({ type: 'action', action: 'copyPath', file: f }), { secondary: true }),
    button(l10n.t('Delete…'), () => send({ type: 'action', action: 'delete', file: f }), { secondary: true }),
  );
}

const evalClicks = (file: string) => ({
  cell: (row: number, col: number) => send({ type: 'gallery', file, what: { kind: 'cell', row, col } }),
  mistakes: () => send({ type: 'gallery', file, what: { kind: 'mistakes' } }),
});

/** The gallery last drawn (file and cell), to scroll a new one into view once. */
let lastGallery = '';

function render(): void {
  const root = document.getElementById('app')!;
  if (!state) return;
  const s = state;
  const sel = s.rows.find((r) => r.file === s.selected);
  const parts: Child[] = [
    header(s),
    s.rows.length ? checkpointsTable(s) : el('p', {}, s.busy ? '' : l10n.t('This run has no checkpoints yet.')),
    sel
      ? el('div', {}, el('h3', {}, l10n.t('Selected: {0}', sel.name)), actions(s, sel))
      : s.rows.length
        ? el('p', { class: 'muted' }, l10n.t('Click a checkpoint for its tensors and actions.'))
        : null,
    s.comparison ? compareSection(s.comparison) : null,
    s.predictionsComparison
      ? predictionsCompareSection(s.predictionsComparison, s.run.classes, () => send({ type: 'closeGallery' }))
      : null,
    s.evaluation && s.evaluation.file === s.selected ? evalSection(s.evaluation, evalClicks(s.evaluation.file)) : null,
    s.gallery && s.gallery.file === s.selected && s.evaluation?.file === s.selected
      ? gallerySection(s.gallery, s.evaluation.classes, () => send({ type: 'closeGallery' }))
      : null,
    s.tensors && s.tensors.file === s.selected ? tensorsSection(s.tensors, s.run.classes) : null,
  ];
  root.replaceChildren(...parts.filter((p): p is Node => p instanceof Node));
  // A gallery the user just asked for opens below the matrix: bring it into view, once.
  const shown = s.gallery ? JSON.stringify([s.gallery.file, s.gallery.what]) : s.predictionsComparison ? 'compare' : '';
  if (shown && shown !== lastGallery) document.querySelector('.gallery')?.scrollIntoView({ block: 'nearest' });
  lastGallery = shown;
}

window.addEventListener('message', (e: MessageEvent) => {
  if (!isHostMessage(e.data)) return;
  state = e.data.state;
  render();
});
send({ type: 'ready' });
