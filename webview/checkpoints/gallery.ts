// The predictions gallery of the checkpoint explorer UI: the images of a confusion-matrix cell or
// the most confident mistakes (thumbnails the host fetched from the target, most confident first),
// and two checkpoints compared by their predictions. File and class names go in as text; a
// thumbnail is a data: URL of the base64 JPEG the runner made (the page's CSP allows data: images).
import type { GalleryItem, GalleryView, PredictionsCompareView } from '../../src/shared/checkpointsProtocol';
import { button, el, pct } from './dom';

const topLine = (top: GalleryItem['top'], classes: string[], n = 3): string =>
  top === null
    ? 'no prediction (NaN/Inf logits)'
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
  } else pic = el('div', { class: 'nothumb', title: item.thumbError ?? '' }, item.thumbError ?? 'no thumbnail');
  return el(
    'figure',
    { class: 'shot', title: item.file },
    pic,
    el(
      'figcaption',
      {},
      el('div', { class: 'fname' }, item.file.split('/').pop() ?? item.file),
      el('div', {}, `true: ${classes[item.label] ?? item.label}`),
      el('div', { class: 'muted' }, topLine(item.top, classes)),
      ...extra.filter((x): x is string => x !== null).map((x) => el('div', { class: 'muted' }, x)),
    ),
  );
}

export function gallerySection(g: GalleryView, classes: string[], close: () => void): HTMLElement {
  const title =
    g.what.kind === 'cell'
      ? `Images of true ${classes[g.what.row] ?? g.what.row} → predicted ${classes[g.what.col] ?? g.what.col}`
      : 'The most confident mistakes';
  const note =
    g.what.kind === 'cell'
      ? `${g.count} image${g.count === 1 ? '' : 's'} in this cell; ${g.recorded} recorded by the evaluation`
      : `${g.count} mistake${g.count === 1 ? '' : 's'} recorded`;
  return el(
    'div',
    { class: 'gallery' },
    el('h3', {}, title),
    el(
      'div',
      { class: 'muted' },
      `${note}${g.items.length < g.recorded ? `; the first ${g.items.length} shown` : ''}, the most confident first.`,
    ),
    g.items.length
      ? el('div', { class: 'shots' }, ...g.items.map((it) => figure(it, classes)))
      : el(
          'p',
          { class: 'muted' },
          g.count ? 'None of these images was recorded (see the evaluation’s note).' : 'No images here.',
        ),
    el('div', { class: 'bar' }, button('Close', close, { secondary: true })),
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
        el('th', {}, 'Class'),
        el('th', { class: 'num' }, `Recall ${A}`),
        el('th', { class: 'num' }, `Recall ${B}`),
        el('th', { class: 'num' }, 'Change'),
        el('th', { class: 'num' }, 'Images'),
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
  const kindText = { fixed: `fixed by ${B}`, broken: `broken by ${B}`, other: 'wrong in both, differently' };
  return el(
    'div',
    { class: 'gallery' },
    el('h3', {}, `Predictions: ${A} vs ${B}`),
    el(
      'div',
      {},
      `Accuracy ${pct(c.accuracyA)} → ${pct(c.accuracyB)} (${delta(c.accuracyA, c.accuracyB)}) on ${c.common} images both evaluations recorded in ${c.data}`,
    ),
    el(
      'div',
      { class: 'muted' },
      `${c.changedCount} image${c.changedCount === 1 ? '' : 's'} changed prediction: ${c.fixed} fixed, ${c.broken} broken, ${c.changedCount - c.fixed - c.broken} other${c.items.length < c.changedCount ? `; the first ${c.items.length} shown` : ''}.`,
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
      : el('p', { class: 'muted' }, 'No image changed its prediction.'),
    el('div', { class: 'bar' }, button('Close', close, { secondary: true })),
  );
}
