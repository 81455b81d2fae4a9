// The explorer's predictions gallery, host side: which images a gallery or a comparison by
// predictions shows (core/checkpoints/predictions.ts chooses), and their thumbnails, asked of the
// runner on the target where the data lives (`thumbs`, a bounded call). No `vscode` import: the
// explorer (explorer.ts) calls these with its host's `thumbs`.
import type { EvalResult, Thumb } from '../../core/checkpoints/client';
import { cellImages, confidentMistakes, diffPredictions, predicted } from '../../core/checkpoints/predictions';
import type {
  GalleryItem,
  GalleryView,
  GalleryWhat,
  ImagePrediction,
  PredictionsCompareView,
} from '../../shared/checkpointsProtocol';

/** Thumbnails per gallery: 48 of ~4 KB (96 px JPEG, base64) stay well inside `thumbs`' 512 KB budget. */
export const GALLERY_ITEMS = 48;

export type ThumbsOf = (root: string, files: string[]) => Promise<Thumb[]>;

async function withThumbs<T extends ImagePrediction>(
  root: string,
  picked: T[],
  thumbs: ThumbsOf,
): Promise<(T & GalleryItem)[]> {
  const got = picked.length
    ? await thumbs(
        root,
        picked.map((p) => p.file),
      )
    : [];
  const byFile = new Map(got.map((t) => [t.file, t]));
  return picked.map((p) => {
    const t = byFile.get(p.file);
    return {
      ...p,
      thumb: t?.jpeg ?? null,
      thumbError: t?.jpeg ? null : (t?.error ?? (t?.leftOut ? 'over the size budget' : 'no thumbnail')),
    };
  });
}

/** The gallery of one evaluation: a confusion-matrix cell's images, or its most confident mistakes. */
export async function galleryView(
  file: string,
  ev: EvalResult,
  what: GalleryWhat,
  thumbs: ThumbsOf,
): Promise<GalleryView> {
  const mistakes = confidentMistakes(ev.predictions, Number.MAX_SAFE_INTEGER);
  const images = what.kind === 'cell' ? cellImages(ev.predictions, what.row, what.col) : mistakes;
  const count = what.kind === 'cell' ? (ev.confusion[what.row]?.[what.col] ?? 0) : mistakes.length;
  return {
    file,
    what,
    count,
    recorded: images.length,
    items: await withThumbs(ev.data, images.slice(0, GALLERY_ITEMS), thumbs),
  };
}

/** Recorded images predicted wrongly. */
export const mistakeCount = (ev: EvalResult): number =>
  ev.predictions.filter((r) => predicted(r) !== null && predicted(r) !== r.label).length;

/** Why two evaluations cannot be compared by their predictions, or undefined when they can. */
export function cannotCompare(
  a: string,
  b: string,
  ea: EvalResult | undefined,
  eb: EvalResult | undefined,
): string | undefined {
  const name = (f: string) => f.split('/').pop();
  const missing = [...(ea?.predictions.length ? [] : [name(a)]), ...(eb?.predictions.length ? [] : [name(b)])];
  if (missing.length)
    return `Evaluate ${missing.join(' and ')} first (an evaluation keeps each image's prediction), on the same data for both.`;
  if (ea!.data !== eb!.data)
    return `${name(a)} was evaluated on ${ea!.data} and ${name(b)} on ${eb!.data}: evaluate both on the same folder.`;
  if (ea!.classes.join('\n') !== eb!.classes.join('\n')) return 'The two evaluations have different classes.';
  return undefined;
}

/** Two checkpoints by their predictions: accuracy and per-class recall on the common images, and the changed ones. */
export async function predictionsCompareView(
  a: string,
  b: string,
  ea: EvalResult,
  eb: EvalResult,
  thumbs: ThumbsOf,
): Promise<PredictionsCompareView> {
  const d = diffPredictions(ea.predictions, eb.predictions, ea.classes.length);
  const picked = d.changed
    .slice(0, GALLERY_ITEMS)
    .map((c) => ({ file: c.file, label: c.label, top: c.a, topB: c.b, kind: c.kind }));
  return {
    a,
    b,
    data: ea.data,
    common: d.common,
    accuracyA: d.accuracyA,
    accuracyB: d.accuracyB,
    perClass: d.perClass.map((p, i) => ({ class: ea.classes[i], ...p })),
    changedCount: d.changed.length,
    fixed: d.changed.filter((c) => c.kind === 'fixed').length,
    broken: d.changed.filter((c) => c.kind === 'broken').length,
    items: await withThumbs(ea.data, picked, thumbs),
  };
}
