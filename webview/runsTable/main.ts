// The Runs Table UI (dist/webview/runsTable.js + .css), in a VS Code webview. It draws the host's
// snapshot (src/shared/runsTableProtocol.ts) and sends back what the user does: sort, filter,
// columns, selection, Compare Runs, Config Diff, Delete, Refresh. The host owns the state; the UI
// keeps only the filter being typed (so a snapshot never moves the caret). Every text from a run
// (names, tags, spec values) goes in through textContent, never as HTML. Words are in the display
// language: the host puts its bundle on <body> (webview/shared/l10n.ts).
import './runsTable.css'; // esbuild bundles it into dist/webview/runsTable.css
import '@vscode-elements/elements/dist/vscode-button/index.js';
import {
  isHostMessage,
  type ColumnView,
  type DiffView,
  type RangeFilter,
  type RowView,
  type TableFilter,
  type TableState,
  type UiMessage,
} from '../../src/shared/runsTableProtocol';
import * as l10n from '../shared/l10n';
import { cellText, columnLabel, stateWord } from './words';

declare function acquireVsCodeApi(): { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void };
const vscode = acquireVsCodeApi();
const send = (m: UiMessage) => vscode.postMessage(m);

let state: TableState | null = null;
let draft: TableFilter = { text: '', tags: [], states: [], ranges: [] };
let drafted = false; // the draft was taken from the host's first snapshot

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
  opts: { secondary?: boolean; disabled?: boolean; id?: string; title?: string } = {},
) {
  const b = document.createElement('vscode-button');
  b.textContent = label;
  if (opts.id) b.id = opts.id;
  if (opts.title) b.title = opts.title;
  if (opts.secondary) b.setAttribute('secondary', '');
  if (opts.disabled) b.setAttribute('disabled', '');
  b.addEventListener('click', () => {
    if (!b.hasAttribute('disabled')) onClick();
  });
  return b;
}

function checkbox(checked: boolean, onChange: (on: boolean) => void, label?: string): HTMLElement {
  const box = Object.assign(document.createElement('input'), { type: 'checkbox', checked });
  box.addEventListener('change', () => onChange(box.checked));
  return label === undefined ? box : el('label', { class: 'check' }, box, ` ${label}`);
}

let textTimer: ReturnType<typeof setTimeout> | undefined;
function sendFilter(now = false): void {
  clearTimeout(textTimer);
  if (now) send({ type: 'filter', filter: draft });
  else textTimer = setTimeout(() => send({ type: 'filter', filter: draft }), 150);
}

// ---- the parts drawn once: header, the text filter and the action buttons' places ----

function frame(): void {
  const text = Object.assign(document.createElement('input'), {
    type: 'search',
    id: 'filter-text',
    placeholder: l10n.t('Filter: words, or field=value (lr=0.01)'),
    value: draft.text,
  });
  text.addEventListener('input', () => {
    draft = { ...draft, text: text.value };
    sendFilter();
  });
  document.getElementById('app')!.replaceChildren(
    el('h2', { id: 'title' }),
    el('div', { class: 'muted', id: 'count' }),
    el('div', { id: 'errors' }),
    el(
      'div',
      { class: 'toolbar' },
      text,
      el('details', { id: 'states' }),
      el('details', { id: 'tags' }),
      el('details', { id: 'columns' }),
      button(l10n.t('Refresh'), () => send({ type: 'refresh' }), { secondary: true, id: 'refresh' }),
    ),
    el('div', { id: 'ranges' }),
    el('div', { class: 'actions', id: 'actions' }),
    el('div', { class: 'scroll' }, el('table', { id: 'runs' })),
    el('section', { id: 'diff' }),
  );
}

// ---- the parts a snapshot redraws ----

/** The States or Tags menu: `none` is what it says when there is nothing to choose; `word` names an option. */
function choiceList(
  id: 'states' | 'tags',
  text: { label: string; none: string; word: (o: string) => string },
  options: string[],
  chosen: string[],
): void {
  const d = document.getElementById(id) as HTMLDetailsElement;
  const open = d.open;
  const set = new Set(chosen);
  d.replaceChildren(
    el('summary', {}, chosen.length ? l10n.t('{0} ({1})', text.label, chosen.length) : text.label),
    el(
      'div',
      { class: 'menu' },
      options.length ? null : el('div', { class: 'muted' }, text.none),
      ...options.map((o) => {
        const c = checkbox(
          set.has(o),
          (on) => {
            const next = on ? [...set, o] : [...set].filter((x) => x !== o);
            draft = { ...draft, [id]: next };
            sendFilter(true);
          },
          text.word(o),
        );
        c.dataset.value = o;
        return c;
      }),
    ),
  );
  d.open = open;
}

function columnChooser(s: TableState): void {
  const d = document.getElementById('columns') as HTMLDetailsElement;
  const open = d.open;
  const shown = s.choices.filter((c) => c.shown).map((c) => c.key);
  const toggle = (key: string, on: boolean) =>
    send({ type: 'columns', mode: 'chosen', keys: on ? [...shown, key] : shown.filter((k) => k !== key) });
  const item = (c: TableState['choices'][number]) => {
    const l = checkbox(c.shown, (on) => toggle(c.key, on), columnLabel(c));
    l.dataset.key = c.key;
    if (c.differs) l.classList.add('differs');
    return l;
  };
  d.replaceChildren(
    el('summary', {}, s.columnMode === 'auto' ? l10n.t('Columns') : l10n.t('Columns (chosen)')),
    el(
      'div',
      { class: 'menu wide' },
      el(
        'div',
        { class: 'menu-actions' },
        button(l10n.t('Default'), () => send({ type: 'columns', mode: 'auto' }), {
          secondary: true,
          id: 'columns-auto',
        }),
        button(
          l10n.t('All spec fields'),
          () =>
            send({
              type: 'columns',
              mode: 'chosen',
              keys: [...shown, ...s.choices.filter((c) => c.spec && !c.shown).map((c) => c.key)],
            }),
          { secondary: true, id: 'columns-all' },
        ),
      ),
      el('div', { class: 'muted' }, l10n.t('Results')),
      ...s.choices.filter((c) => !c.spec).map(item),
      el('div', { class: 'muted' }, l10n.t('Spec fields (● differs between the listed runs)')),
      ...s.choices.filter((c) => c.spec).map(item),
    ),
  );
  d.open = open;
}

function ranges(s: TableState): void {
  const numeric = s.choices.filter((c) => c.numeric);
  const put = (i: number, r: RangeFilter | null) => {
    const next = [...draft.ranges];
    if (r) next[i] = r;
    else next.splice(i, 1);
    draft = { ...draft, ranges: next };
    sendFilter(true);
  };
  const bound = (r: RangeFilter, i: number, which: 'min' | 'max') => {
    const input = Object.assign(document.createElement('input'), {
      type: 'number',
      step: 'any',
      placeholder: which === 'min' ? l10n.t('min') : l10n.t('max'),
      value: r[which] === null ? '' : String(r[which]),
      className: `range-${which}`,
    });
    input.addEventListener('change', () => {
      const v = input.value.trim() === '' ? null : Number(input.value);
      put(i, { ...r, [which]: v !== null && Number.isFinite(v) ? v : null });
    });
    return input;
  };
  const rows = draft.ranges.map((r, i) => {
    const pick = document.createElement('select');
    for (const c of numeric)
      pick.append(Object.assign(document.createElement('option'), { value: c.key, textContent: columnLabel(c) }));
    pick.value = r.key;
    pick.addEventListener('change', () => put(i, { ...r, key: pick.value }));
    const row = el(
      'div',
      { class: 'range' },
      pick,
      ` ${l10n.t('from')} `,
      bound(r, i, 'min'),
      ` ${l10n.t('to')} `,
      bound(r, i, 'max'),
      button('×', () => put(i, null), { secondary: true, title: l10n.t('Remove this range filter') }),
    );
    row.dataset.key = r.key;
    return row;
  });
  const first = numeric.find((c) => c.key === 'best_val_acc') ?? numeric[0];
  const add = first
    ? button(l10n.t('Add range filter'), () => put(draft.ranges.length, { key: first.key, min: null, max: null }), {
        secondary: true,
        id: 'add-range',
      })
    : null;
  document.getElementById('ranges')!.replaceChildren(...rows, ...(add ? [add] : []));
}

function actions(s: TableState): void {
  const n = s.selected.length;
  const byId = new Map(s.rows.map((r) => [r.id, r]));
  const deletable = s.selected.filter((id) => byId.get(id)?.deletable).length;
  document.getElementById('actions')!.replaceChildren(
    el(
      'span',
      { class: 'muted', id: 'selected-count' },
      n ? l10n.t('{0} selected', n) : l10n.t('Select runs to compare or delete'),
    ),
    button(l10n.t('Compare Runs'), () => send({ type: 'compare' }), { disabled: n < 2, id: 'compare' }),
    button(l10n.t('Config Diff'), () => send({ type: 'diff', onlyDiffering: s.diff?.onlyDiffering ?? false }), {
      secondary: true,
      disabled: n < 2,
      id: 'diff-open',
    }),
    button(
      deletable && deletable < n ? l10n.t('Delete ({0} ended)', deletable) : l10n.t('Delete'),
      () => send({ type: 'delete' }),
      {
        secondary: true,
        disabled: deletable === 0,
        id: 'delete',
      },
    ),
  );
}

function stateCell(row: RowView): HTMLElement {
  const st = String(row.values.state ?? '');
  const icon = { running: '●', completed: '✓', stopped: '■', failed: '✗', lost: '?' }[st] ?? '';
  const td = el('td', { class: `state state-${st}` }, `${icon} ${stateWord(st)}`);
  if (row.health === 'problems')
    td.append(el('span', { class: 'health-problems', title: row.healthNote ?? l10n.t('problems') }, ' ⚠'));
  if (row.problem) td.append(el('span', { class: 'bad-run', title: row.problem }, l10n.t(' (bad files)')));
  td.title = [row.healthNote, row.problem].filter(Boolean).join('\n');
  return td;
}

function table(s: TableState): void {
  const selected = new Set(s.selected);
  const ids = s.rows.map((r) => r.id);
  const all = ids.length > 0 && ids.every((id) => selected.has(id));
  const head = el(
    'tr',
    {},
    el(
      'th',
      { class: 'sel' },
      checkbox(all, (on) =>
        send({
          type: 'select',
          ids: on ? [...new Set([...s.selected, ...ids])] : s.selected.filter((id) => !ids.includes(id)),
        }),
      ),
    ),
    ...s.columns.map((c) => {
      const sorted = s.sort.key === c.key;
      const th = el(
        'th',
        {
          class: `${c.numeric ? 'num' : ''}${c.spec ? ' spec' : ''}`,
          title: c.spec ? l10n.t('spec field {0}', c.label) : columnLabel(c),
          onclick: () => send({ type: 'sort', key: c.key }),
        },
        columnLabel(c),
        sorted ? (s.sort.dir === 'asc' ? ' ▲' : ' ▼') : '',
      );
      th.dataset.key = c.key;
      th.setAttribute('aria-sort', sorted ? (s.sort.dir === 'asc' ? 'ascending' : 'descending') : 'none');
      return th;
    }),
  );
  const body = s.rows.map((row) => {
    const tr = el(
      'tr',
      { class: selected.has(row.id) ? 'selected' : '' },
      el(
        'td',
        { class: 'sel' },
        checkbox(selected.has(row.id), (on) =>
          send({ type: 'select', ids: on ? [...s.selected, row.id] : s.selected.filter((id) => id !== row.id) }),
        ),
      ),
      ...s.columns.map((c) => cell(row, c)),
    );
    tr.dataset.id = row.id;
    tr.dataset.run = row.runId;
    return tr;
  });
  const empty = s.rows.length
    ? null
    : el(
        'tr',
        {},
        el(
          'td',
          { class: 'muted empty' },
          s.loading
            ? l10n.t('Listing runs…')
            : s.total
              ? l10n.t('No run matches the filter.')
              : l10n.t('No runs on this target yet.'),
        ),
      );
  document.getElementById('runs')!.replaceChildren(el('thead', {}, head), el('tbody', {}, ...body, empty));
}

function cell(row: RowView, c: ColumnView): HTMLElement {
  if (c.key === 'state') return stateCell(row);
  const v = row.values[c.key];
  const td = el('td', { class: `${c.numeric ? 'num' : ''}${c.spec ? ' spec' : ''}` }, cellText(v, c.kind));
  td.dataset.key = c.key;
  if (c.kind === 'value' && typeof v === 'string' && v.length > 40) td.title = v;
  return td;
}

function diff(d: DiffView | null): void {
  const section = document.getElementById('diff')!;
  if (!d) {
    section.replaceChildren();
    return;
  }
  const changed = d.rows.filter((r) => r.differs).length;
  section.replaceChildren(
    el(
      'h3',
      {},
      l10n.t('Config diff of {0} runs', d.runs.length),
      el(
        'span',
        { class: 'muted' },
        changed === 1 ? l10n.t(' · 1 field differs') : l10n.t(' · {0} fields differ', changed),
      ),
    ),
    el(
      'div',
      { class: 'toolbar' },
      checkbox(d.onlyDiffering, (on) => send({ type: 'diff', onlyDiffering: on }), l10n.t('Only differences')),
      button(l10n.t('Close'), () => send({ type: 'closeDiff' }), { secondary: true, id: 'diff-close' }),
    ),
    el(
      'div',
      { class: 'scroll' },
      el(
        'table',
        { id: 'diff-table' },
        el('thead', {}, el('tr', {}, el('th', {}, l10n.t('Field')), ...d.runs.map((r) => el('th', {}, r.name)))),
        el(
          'tbody',
          {},
          ...d.rows.map((r) => {
            const tr = el(
              'tr',
              { class: r.differs ? 'differs' : '' },
              el('td', { class: 'field' }, r.key),
              ...r.values.map((v) => el('td', {}, v)),
            );
            tr.dataset.key = r.key;
            return tr;
          }),
        ),
      ),
    ),
  );
}

function render(s: TableState): void {
  document.getElementById('title')!.textContent = s.title;
  document.getElementById('count')!.textContent =
    (s.total === 1 ? l10n.t('{0} of 1 run', s.rows.length) : l10n.t('{0} of {1} runs', s.rows.length, s.total)) +
    (s.loading ? l10n.t(' · listing…') : '');
  document.getElementById('errors')!.replaceChildren(...s.errors.map((e) => el('div', { class: 'error' }, e)));
  choiceList('states', { label: l10n.t('States'), none: l10n.t('No states'), word: stateWord }, s.states, draft.states);
  choiceList('tags', { label: l10n.t('Tags'), none: l10n.t('No tags'), word: (tag) => tag }, s.tags, draft.tags);
  columnChooser(s);
  ranges(s);
  actions(s);
  table(s);
  diff(s.diff);
}

l10n.loadBundleFromBody();
frame();
window.addEventListener('message', (e: MessageEvent) => {
  if (!isHostMessage(e.data)) return;
  state = e.data.state;
  if (!drafted) {
    draft = state.filter;
    drafted = true;
    (document.getElementById('filter-text') as HTMLInputElement).value = draft.text;
  }
  render(state);
});
send({ type: 'ready' });
