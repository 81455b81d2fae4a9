// The predictions gallery of the checkpoint explorer UI: the images of a confusion-matrix cell or
// the most confident mistakes (thumbnails the host fetched from the target, most confident first),
// and two checkpoints compared by their predictions. File and class names go in as text; a
// thumbnail is a data: URL of the base64 JPEG the runner made (the page's CSP allows data: images).
import * as l10n from '../shared/l10n';
import type { GalleryItem, GalleryView, PredictionsCompareView } from '../../src/shared/checkpointsProtocol';
import { button, count, el, pct } from './dom';

const topLine = (top: GalleryItem['top'], classes: string[], n = 3): string =>
  top === null
    ? l10n.t('no prediction (NaN/Inf logits)')
    : top
        .slice(0, n)
        .map(([c, p]) => `${classes[c] ?? c} ${pct(p)}`)
        .join(' · ');

function figure(item: GalleryItem, classes: string[], extra: (string | null)[] = []): HTMLElement {
  let pic: HTMLElement;
  if (item.thumb) {
    const img = el('img', { title: item.file });
    img.alt = item.file;
    img.src = `data:image/jpeg;base64,${item.thumb}`;
    pic = img;
  } else pic = el('div', { class: 'nothumb', title: item.thumbError ?? '' }, item.thumbError ?? l10n.t('no thumbnail'));
  return el(
    'figure',
    { class: 'shot', title: item.file },
    pic,
    el(
      'figcaption',
      {},
      el('div', { class: 'fname' }, item.file.split('/').pop() ?? item.file),
      el('div', {}, l10n.t('true: {0}', classes[item.label] ?? item.label)),
      el('div', { class: 'muted' }, topLine(item.top, classes)),
      ...extra.filter((x): x is string => x !== null).map((x) => el('div', { class: 'muted' }, x)),
    ),
  );
}

export function gallerySection(g: GalleryView, classes: string[], close: () => void): HTMLElement {
  const title =
    g.what.kind === 'cell'
      ? l10n.t(
          'Images of true {0} → predicted {1}',
          classes[g.what.row] ?? g.what.row,
          classes[g.what.col] ?? g.what.col,
        )
      : l10n.t('The most confident mistakes');
  const note =
    g.what.kind === 'cell'
      ? g.count === 1
        ? l10n.t('1 image in this cell; {0} recorded by the evaluation', count(g.recorded))
        : l10n.t('{0} images in this cell; {1} recorded by the evaluation', count(g.count), count(g.recorded))
      : g.count === 1
        ? l10n.t('1 mistake recorded')
        : l10n.t('{0} mistakes recorded', count(g.count));
  return el(
    'div',
    { class: 'gallery' },
    el('h3', {}, title),
    el(
      'div',
      { class: 'muted' },
      l10n.t(
        '{0}{1}, the most confident first.',
        note,
        g.items.length < g.recorded ? l10n.t('; the first {0} shown', count(g.items.length)) : '',
      ),
    ),
    g.items.length
      ? el('div', { class: 'shots' }, ...g.items.map((it) => figure(it, classes)))
      : el(
          'p',
          { class: 'muted' },
          g.count
            ? l10n.t('None of these images was recorded (see the evaluation’s note).')
            : l10n.t('No images here.'),
        ),
    el('div', { class: 'bar' }, button(l10n.t('Close'), close, { secondary: true })),
  );
}

const delta = (a: number | null, b: number | null) =>
  a === null || b === null ? '' : `${b >= a ? '+' : ''}${((b - a) * 100).toFixed(1)} pt`;

export function predictionsCompareSection(
  c: PredictionsCompareView,
  classes: string[],
  close: () => void,
): HTMLElement {
  const A = c.a.split('/').pop();
  const B = c.b.split('/').pop();
  const per = el(
    'table',
    { class: 'pred-compare' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', {}, l10n.t('Class')),
        el('th', { class: 'num' }, l10n.t('Recall {0}', A)),
        el('th', { class: 'num' }, l10n.t('Recall {0}', B)),
        el('th', { class: 'num' }, l10n.t('Change')),
        el('th', { class: 'num' }, l10n.t('Images')),
      ),
    ),
    el(
      'tbody',
      {},
      ...c.perClass.map((p) =>
        el(
          'tr',
          {},
          el('td', {}, p.class),
          el('td', { class: 'num' }, pct(p.recallA)),
          el('td', { class: 'num' }, pct(p.recallB)),
          el('td', { class: 'num' }, delta(p.recallA, p.recallB)),
          el('td', { class: 'num' }, String(p.support)),
        ),
      ),
    ),
  );
  const kindText = {
    fixed: l10n.t('fixed by {0}', B),
    broken: l10n.t('broken by {0}', B),
    other: l10n.t('wrong in both, differently'),
  };
  return el(
    'div',
    { class: 'gallery' },
    el('h3', {}, l10n.t('Predictions: {0} vs {1}', A, B)),
    el(
      'div',
      {},
      l10n.t(
        'Accuracy {0} → {1} ({2}) on {3} images both evaluations recorded in {4}',
        pct(c.accuracyA),
        pct(c.accuracyB),
        delta(c.accuracyA, c.accuracyB),
        c.common,
        c.data,
      ),
    ),
    el(
      'div',
      { class: 'muted' },
      c.changedCount === 1
        ? l10n.t(
            '1 image changed prediction: {0} fixed, {1} broken, {2} other.',
            c.fixed,
            c.broken,
            1 - c.fixed - c.broken,
          )
        : l10n.t(
            '{0} images changed prediction: {1} fixed, {2} broken, {3} other.',
            c.changedCount,
            c.fixed,
            c.broken,
            c.changedCount - c.fixed - c.broken,
          ),
      c.items.length < c.changedCount ? l10n.t(' The first {0} are shown.', c.items.length) : '',
    ),
    per,
    c.items.length
      ? el(
          'div',
          { class: 'shots' },
          ...c.items.map((it) =>
            figure({ ...it }, classes, [`${B}: ${topLine(it.topB ?? null, classes, 2)}`, kindText[it.kind]]),
          ),
        )
      : el('p', { class: 'muted' }, l10n.t('No image changed its prediction.')),
    el('div', { class: 'bar' }, button(l10n.t('Close'), close, { secondary: true })),
  );
}
