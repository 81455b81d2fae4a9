// The read-only sections of the checkpoint explorer UI: the selected checkpoint's tensors by
// module, its last evaluation (accuracy, per-class table, confusion matrix) and a comparison of two
// checkpoints. They draw what the host sent; the controls are in main.ts.
import * as l10n from '../shared/l10n';
import { joined } from '../../src/shared/l10n';
import type { CompareView, EvalView, TensorsView } from '../../src/shared/checkpointsProtocol';
import { button, count, el, fix, pct } from './dom';

/** A tensor group: a module's name as the network has it; the optimizer's state and the run's counters in words. */
const groupName = (group: string) =>
  group === 'optimizer' ? l10n.t('optimizer state') : group === 'run state' ? l10n.t('run counters') : group;

/** A tensor's training mark: the spec's trained or frozen part, or nothing when unknown. */
const mark = (trainable: boolean | null) =>
  trainable === true ? l10n.t('trained') : trainable === false ? l10n.t('frozen') : '';

export function tensorsSection(t: TensorsView, classes: string[]): HTMLElement {
  const groups = new Map<string, TensorsView['tensors']>();
  for (const x of t.tensors) groups.set(x.module, [...(groups.get(x.module) ?? []), x]);
  const head =
    t.headOut === null
      ? null
      : el(
          'div',
          { class: t.headMatchesClasses === false ? 'bad' : t.headMatchesClasses ? 'ok' : 'muted' },
          t.headMatchesClasses === false
            ? l10n.t('✖ The head outputs {0} classes, the run has {1}', count(t.headOut), count(classes.length))
            : l10n.t(
                '{0}The head outputs {1} classes{2}',
                t.headMatchesClasses ? '✔ ' : '',
                count(t.headOut),
                classes.length ? l10n.t(' (the run has {0})', count(classes.length)) : '',
              ),
        );
  const modules = [...groups].map(([m, list]) => {
    const els = list.reduce((a, x) => a + x.elements, 0);
    const kinds = new Set(list.map((x) => x.trainable));
    const summary = kinds.size === 1 ? mark(list[0].trainable) : l10n.t('mixed');
    const rows = list.map((x) =>
      el(
        'tr',
        { class: x.trainable === false ? 'frozen' : undefined },
        el('td', {}, x.name),
        el('td', {}, `[${x.shape.join(', ')}]`),
        el('td', {}, x.dtype),
        el('td', { class: 'num' }, count(x.elements)),
        el('td', {}, mark(x.trainable)),
      ),
    );
    const d = el(
      'details',
      {},
      el(
        'summary',
        {},
        el('span', { class: 'module' }, groupName(m)),
        l10n.t(' {0} tensors · {1} values{2}', count(list.length), count(els), summary ? ` · ${summary}` : ''),
      ),
      el('table', {}, el('tbody', {}, ...rows)),
    );
    return d;
  });
  return el(
    'div',
    {},
    el(
      'h3',
      {},
      l10n.t('Tensors of {0} ({1}, {2} values)', t.file.split('/').pop(), count(t.tensors.length), count(t.total)),
    ),
    head,
    ...modules,
  );
}

/** What a click in the evaluation asks for: a cell's images, or the most confident mistakes. */
export interface EvalClicks {
  cell(row: number, col: number): void;
  mistakes(): void;
}

export function evalSection(e: EvalView, clicks: EvalClicks): HTMLElement {
  const gallery = e.recorded !== null && e.recorded.kept > 0;
  const per = el(
    'table',
    {},
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', {}, l10n.t('Class')),
        el('th', { class: 'num' }, l10n.t('Precision')),
        el('th', { class: 'num' }, l10n.t('Recall')),
        el('th', { class: 'num' }, l10n.t('Support')),
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
          p.precision === null
            ? el(
                'td',
                { class: 'num muted', title: l10n.t('No image was predicted as this class') },
                l10n.t('never predicted'),
              )
            : el('td', { class: 'num' }, pct(p.precision)),
          el('td', { class: 'num' }, pct(p.recall)),
          el('td', { class: 'num' }, count(p.support)),
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
      el('tr', {}, el('th', {}, l10n.t('true \\ predicted')), ...e.classes.map((c) => el('th', { title: c }, c))),
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
            const td = el(
              'td',
              {
                class: gallery ? 'cell' : undefined,
                title: `${e.classes[i]} → ${e.classes[j]}: ${count(v)}${gallery ? l10n.t(' (click for the images)') : ''}`,
                onclick: gallery ? () => clicks.cell(i, j) : undefined,
              },
              count(v),
            );
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
    el('h3', {}, l10n.t('Evaluation of {0}', e.file.split('/').pop())),
    el(
      'div',
      {},
      l10n.t(
        'Accuracy {0}{1} · loss {2} · {3} images in {4}{5}{6}',
        pct(e.accuracy),
        e.top5 !== null
          ? l10n.t(
              ' · top-5 {0}{1}',
              pct(e.top5),
              e.classes.length <= 5 ? l10n.t(' (5 classes or fewer: 1 by definition)') : '',
            )
          : '',
        fix(e.loss),
        count(e.numImages),
        e.data,
        e.skipped ? l10n.t(' · {0} skipped', count(e.skipped)) : '',
        e.evaluatedAt ? ` · ${new Date(e.evaluatedAt * 1000).toLocaleString(l10n.language())}` : '',
      ),
    ),
    per,
    el(
      'div',
      { class: 'muted' },
      l10n.t(
        'Confusion matrix (rows: true class, columns: predicted){0}',
        gallery ? l10n.t('. Click a cell for its images.') : '',
      ),
    ),
    cm,
    e.recorded === null
      ? el(
          'div',
          { class: 'muted' },
          l10n.t('This evaluation has no per-image predictions (evaluate again for the gallery).'),
        )
      : el(
          'div',
          { class: 'bar' },
          button(l10n.t('Most confident mistakes ({0})', e.mistakes), () => clicks.mistakes(), {
            secondary: true,
            disabled: e.mistakes === 0,
          }),
          el(
            'span',
            { class: 'muted' },
            e.recorded.all
              ? l10n.t("every image's prediction recorded ({0})", e.recorded.kept)
              : l10n.t(
                  '{0} of {1} images recorded: the most confident mistakes and a sample of the rest',
                  e.recorded.kept,
                  e.recorded.total,
                ),
          ),
        ),
  );
}

type TensorDiff = CompareView['tensors'][number];

const tensorRow = (t: TensorDiff) =>
  el(
    'tr',
    { class: t.frozen ? 'frozen' : undefined },
    el('td', {}, t.name),
    el('td', {}, `[${t.shape.join(', ')}]`),
    el('td', { class: 'num' }, fix(t.l2)),
    el('td', { class: 'num' }, pct(t.rel)),
    el('td', {}, mark(t.frozen === null ? null : !t.frozen)),
  );

function spanCell(...children: (Node | string)[]): HTMLTableCellElement {
  const td = el('td', {}, ...children);
  td.colSpan = 5;
  return td;
}

/** The unchanged frozen tensors in one line; their names behind a disclosure. */
function foldedRow(folded: TensorDiff[]): HTMLElement {
  const values = folded.reduce((a, t) => a + t.shape.reduce((x, y) => x * y, 1), 0);
  return el(
    'tr',
    { class: 'frozen folded' },
    spanCell(
      el(
        'details',
        {},
        el(
          'summary',
          {},
          l10n.t('{0} frozen tensors unchanged (L2 of difference 0, {1} values)', count(folded.length), count(values)),
        ),
        el(
          'div',
          { class: 'muted' },
          joined(
            folded.map((t) => t.name),
            l10n.t,
          ),
        ),
      ),
    ),
  );
}

export function compareSection(c: CompareView): HTMLElement {
  // The network's tensors first (unchanged frozen ones folded into one line), optimizer state and counters last.
  const isState = (t: TensorDiff) => t.group === 'optimizer' || t.group === 'run state';
  const net = c.tensors.filter((t) => !isState(t));
  const state = c.tensors.filter(isState);
  const folded = net.filter((t) => t.frozen === true && t.l2 === 0);
  const frozenOk = c.frozenMaxL2 === null ? null : c.frozenMaxL2 === 0;
  return el(
    'div',
    {},
    el('h3', {}, l10n.t('{0} vs {1}', c.a.split('/').pop(), c.b.split('/').pop())),
    el(
      'div',
      {},
      l10n.t('{0} changed, {1} unchanged', count(c.changed), count(c.unchanged)),
      c.onlyInA.length ? l10n.t(' · only in A: {0}', c.onlyInA.length) : '',
      c.onlyInB.length ? l10n.t(' · only in B: {0}', c.onlyInB.length) : '',
      c.shapeMismatch.length ? l10n.t(' · shape differs: {0}', joined(c.shapeMismatch, l10n.t)) : '',
    ),
    frozenOk === null
      ? null
      : el(
          'div',
          { class: frozenOk ? 'ok' : 'bad' },
          frozenOk
            ? l10n.t('✔ The frozen part is unchanged (max L2 distance 0): freezing worked.')
            : l10n.t('✖ The frozen part changed (max L2 distance {0}).', c.frozenMaxL2),
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
          el('th', {}, l10n.t('Tensor')),
          el('th', {}, l10n.t('Shape')),
          el('th', { class: 'num' }, l10n.t('L2 of difference')),
          el('th', { class: 'num' }, l10n.t('Relative change')),
          el('th', {}, ''),
        ),
      ),
      el(
        'tbody',
        {},
        ...net.filter((t) => !folded.includes(t)).map(tensorRow),
        folded.length ? foldedRow(folded) : null,
        ...(state.length
          ? [
              el(
                'tr',
                { class: 'group' },
                spanCell(l10n.t('Optimizer state and run counters ({0})', count(state.length))),
              ),
              ...state.map(tensorRow),
            ]
          : []),
      ),
    ),
  );
}
