// The Preview Data and Classify UI (dist/webview/preview.js + .css), in a VS Code webview. It draws
// the host's snapshot (src/shared/previewProtocol.ts) and sends back Cancel, Run Again and the file
// the user clicked. Every text from the data (class and file names, runner messages) goes in through
// textContent, never as HTML; images are the runner's base64 JPEGs (or the host's data: URL).
import * as l10n from '../shared/l10n';
import { joined } from '../../src/shared/l10n';
import './preview.css'; // esbuild bundles it into dist/webview/preview.css
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import {
  isHostMessage,
  type ClassifyView,
  type PanelState,
  type PreviewView,
  type Thumb,
  type UiMessage,
} from '../../src/shared/previewProtocol';

l10n.loadBundleFromBody(); // before the first render: every text below goes through l10n.t

declare function acquireVsCodeApi(): { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void };
const vscode = acquireVsCodeApi();
const send = (m: UiMessage) => vscode.postMessage(m);

type ThumbView = 'original' | 'train' | 'eval';
const ui: { thumbs: ThumbView } = { thumbs: 'original', ...((vscode.getState() as { thumbs?: ThumbView }) ?? {}) };
let state: PanelState | null = null;

type Child = Node | string | null | undefined | false;
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { class?: string; title?: string; id?: string; onclick?: (e: Event) => void } = {},
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

function button(
  label: string,
  onClick: () => void,
  opts: { secondary?: boolean; disabled?: boolean; id?: string } = {},
) {
  const b = document.createElement('vscode-button');
  b.textContent = label;
  if (opts.id) b.id = opts.id;
  if (opts.secondary) b.setAttribute('secondary', '');
  if (opts.disabled) b.setAttribute('disabled', '');
  b.addEventListener('click', () => {
    if (!b.hasAttribute('disabled')) onClick();
  });
  return b;
}

const fileLink = (path: string, label = path) => {
  const a = el(
    'a',
    { class: 'file', title: l10n.t('Open {0}', path), onclick: () => send({ type: 'openFile', path }) },
    label,
  );
  a.dataset.path = path;
  return a;
};
const pct = (v: number) => `${(v * 100).toFixed(1)}%`;

function header(s: PanelState): HTMLElement {
  const running = s.status === 'running';
  const what = s.kind === 'preview' ? 'Preview Data' : 'Classify with Checkpoint';
  const progress =
    running && s.progress
      ? el(
          'span',
          {},
          Object.assign(document.createElement('progress'), { max: s.progress.total, value: s.progress.done }),
          ` ${s.progress.done} / ${s.progress.total}`,
        )
      : null;
  return el(
    'div',
    {},
    el('h2', {}, `${what}: `, el('span', { id: 'subject' }, s.subject)),
    el('div', { class: 'muted' }, l10n.t('on {0}', s.target)),
    el(
      'div',
      { class: 'status', id: 'status' },
      running ? document.createElement('vscode-progress-ring') : null,
      running ? el('span', { id: 'activity' }, s.activity ?? l10n.t('Working…')) : null,
      progress,
      button(l10n.t('Cancel'), () => send({ type: 'cancel' }), { secondary: true, disabled: !running, id: 'cancel' }),
      button(l10n.t('Run Again'), () => send({ type: 'rerun' }), { secondary: true, disabled: running, id: 'rerun' }),
    ),
    s.error ? el('div', { class: 'error', id: 'error' }, s.error) : null,
  );
}

function classesSection(v: PreviewView): HTMLElement {
  return el(
    'section',
    { id: 'classes' },
    el('h3', {}, l10n.t('Classes ({0})', v.classes.length)),
    el(
      'div',
      { class: 'muted' },
      l10n.t(
        '{0} training and {1} validation images · {2} · {3} px · augmentation {4}',
        v.numTrain,
        v.numVal,
        v.split,
        v.imageSize,
        v.augment ?? l10n.t('off'),
      ),
    ),
    v.imbalance ? el('div', { id: 'imbalance' }, l10n.t('Imbalance: {0}', v.imbalance.text)) : null,
    ...v.classes.map((c) => {
      const fill = el('div', { class: 'fill' });
      fill.style.width = `${(c.share * 100).toFixed(1)}%`;
      const row = el(
        'div',
        {
          class: `class-row${c.tiny ? ' tiny' : ''}`,
          title: c.tiny ? l10n.t('fewer training images than the tiny threshold') : '',
        },
        el('span', { class: 'name' }, c.name),
        el('div', { class: 'track' }, fill),
        el('span', { class: 'count' }, `${c.train} / ${c.val}`),
      );
      row.dataset.class = c.name;
      return row;
    }),
  );
}

function problemsSection(v: PreviewView): HTMLElement {
  return el(
    'section',
    { id: 'problems' },
    el('h3', {}, v.problems.length ? l10n.t('Problems ({0})', v.problems.length) : l10n.t('Problems')),
    v.problems.length
      ? null
      : el('div', { class: 'muted' }, l10n.t('None found: no duplicates, leaks, skipped files or tiny classes.')),
    ...v.problems.map((p) => {
      const d = el(
        'div',
        { class: 'problem' },
        el('div', { class: 'message' }, `⚠ ${p.message}`),
        p.files.length
          ? el(
              'ul',
              {},
              ...p.files.map((f) => el('li', {}, fileLink(f.path), el('span', { class: 'muted' }, ` ${f.note}`))),
            )
          : null,
        p.more ? el('div', { class: 'muted' }, l10n.t('{0} more not listed', p.more)) : null,
      );
      d.dataset.kind = p.kind;
      return d;
    }),
  );
}

function statsSection(v: PreviewView): HTMLElement {
  const s = v.sizes;
  const pc = (p: typeof s.width) => (p ? `${p.min} · ${p.p5} · ${p.p50} · ${p.p95} · ${p.max}` : '–');
  const list = (xs: [string, number][]) =>
    joined(
      xs.map(([k, n]) => `${k} ${n}`),
      l10n.t,
    ) || '–';
  const row = (k: string, val: string) => el('tr', {}, el('td', { class: 'muted' }, k), el('td', {}, val));
  return el(
    'section',
    { id: 'stats' },
    el('h3', {}, l10n.t('Images ({0} read)', s.count)),
    el(
      'table',
      { class: 'stats' },
      row(l10n.t('width min · p5 · median · p95 · max'), pc(s.width)),
      row(l10n.t('height min · p5 · median · p95 · max'), pc(s.height)),
      row(l10n.t('modes'), list(s.modes)),
      row(l10n.t('formats'), list(s.formats)),
      row(l10n.t('grayscale'), String(s.grayscale)),
      row(l10n.t('with alpha'), String(s.alpha)),
    ),
    el('div', { class: 'muted' }, l10n.t('Previewed in {0} s.', v.elapsedS.toFixed(1))),
  );
}

function thumbImage(t: Thumb): HTMLElement {
  const b64 = t[ui.thumbs];
  const name = t.file.split(/[\\/]/).pop() ?? t.file;
  if (!b64) return el('div', { class: 'thumb' }, el('div', { class: 'none muted', title: name }, l10n.t('off')));
  const img = document.createElement('img');
  img.src = `data:image/jpeg;base64,${b64}`;
  img.alt = name;
  img.title = l10n.t('{0} (click to open)', t.file);
  img.dataset.path = t.file;
  img.addEventListener('click', () => send({ type: 'openFile', path: t.file }));
  return el('div', { class: 'thumb' }, img);
}

function thumbsSection(v: PreviewView): HTMLElement {
  const t = v.thumbnails;
  const pick = (view: ThumbView, label: string) => {
    const b = button(
      label,
      () => {
        ui.thumbs = view;
        vscode.setState(ui);
        render();
      },
      { secondary: ui.thumbs !== view },
    );
    b.dataset.view = view;
    return b;
  };
  return el(
    'section',
    { id: 'thumbs' },
    el('h3', {}, l10n.t('Samples ({0})', t.shown)),
    el(
      'div',
      { class: 'toggle' },
      pick('original', 'Original'),
      pick('train', 'Augmented (train)'),
      pick('eval', 'Eval transform'),
    ),
    ui.thumbs === 'eval' && t.evalNote.length
      ? el('div', { class: 'muted', id: 'eval-note' }, ...t.evalNote.map((line) => el('div', {}, line)))
      : null,
    t.leftOut
      ? el('div', { class: 'muted' }, l10n.t('{0} samples left out to keep the panel small.', t.leftOut))
      : null,
    ...t.classes.map((c) => {
      const d = el(
        'div',
        { class: 'thumb-class' },
        el('h4', {}, c.name),
        el('div', { class: 'thumbs' }, ...c.samples.map(thumbImage)),
      );
      d.dataset.class = c.name;
      return d;
    }),
  );
}

function classifySection(c: ClassifyView): HTMLElement {
  return el(
    'section',
    { id: 'predictions' },
    el(
      'div',
      { class: 'muted' },
      l10n.t('{0} image(s) · {1} classes · {2}', c.predictions.length, c.classes, c.device),
    ),
    ...c.predictions.map((p) => {
      const img = p.image ? Object.assign(document.createElement('img'), { src: p.image, alt: p.name }) : null;
      const body = p.error
        ? el('div', { class: 'error' }, p.error)
        : el(
            'div',
            {},
            ...(p.top ?? []).map((t, i) => {
              const fill = el('div', { class: 'fill' });
              fill.style.width = pct(t.prob);
              return el(
                'div',
                { class: `pred-row${i === 0 ? ' first' : ''}` },
                el('span', { class: 'name' }, t.class),
                el('div', { class: 'track' }, fill),
                el('span', { class: 'count' }, pct(t.prob)),
              );
            }),
          );
      const d = el(
        'div',
        { class: 'prediction' },
        img,
        el('div', { class: 'top' }, el('h4', {}, fileLink(p.file, p.name)), body),
      );
      d.dataset.file = p.file;
      d.dataset.ok = p.error ? 'false' : 'true';
      return d;
    }),
  );
}

function render(): void {
  const root = document.getElementById('app')!;
  if (!state) return;
  const s = state;
  const parts: Child[] = [header(s)];
  if (s.preview)
    parts.push(
      classesSection(s.preview),
      problemsSection(s.preview),
      thumbsSection(s.preview),
      statsSection(s.preview),
    );
  if (s.classify) parts.push(classifySection(s.classify));
  root.replaceChildren(...parts.filter((p): p is Node => p instanceof Node));
}

window.addEventListener('message', (e: MessageEvent) => {
  if (!isHostMessage(e.data)) return;
  state = e.data.state;
  render();
});
send({ type: 'ready' });
