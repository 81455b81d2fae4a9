// The explorer's predictions gallery, host side: which images a gallery or a comparison by
// predictions shows (core/checkpoints/predictions.ts chooses), and their thumbnails, asked of the
// runner on the target where the data lives (`thumbs`, a bounded call). No `vscode` import: the
// explorer (explorer.ts) calls these with its host's `thumbs` and `vscode.l10n.t`.
import type { EvalResult, Thumb } from '../../core/checkpoints/client';
import { english, joined, type Translate } from '../../core/l10n';
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
  t: Translate,
): Promise<(T & GalleryItem)[]> {
  const answers = picked.length
    ? await thumbs(
        root,
        picked.map((p) => p.file),
      )
    : [];
  const byFile = new Map(answers.map((x) => [x.file, x]));
  return picked.map((p) => {
    const got = byFile.get(p.file);
    return {
      ...p,
      thumb: got?.jpeg ?? null,
      thumbError: got?.jpeg ? null : (got?.error ?? (got?.leftOut ? t('over the size budget') : t('no thumbnail'))),
    };
  });
}

/** The gallery of one evaluation: a confusion-matrix cell's images, or its most confident mistakes. */
export async function galleryView(
  file: string,
  ev: EvalResult,
  what: GalleryWhat,
  thumbs: ThumbsOf,
  t: Translate = english,
): Promise<GalleryView> {
  const mistakes = confidentMistakes(ev.predictions, Number.MAX_SAFE_INTEGER);
  const images = what.kind === 'cell' ? cellImages(ev.predictions, what.row, what.col) : mistakes;
  const count = what.kind === 'cell' ? (ev.confusion[what.row]?.[what.col] ?? 0) : mistakes.length;
  return {
    file,
    what,
    count,
    recorded: images.length,
    items: await withThumbs(ev.data, images.slice(0, GALLERY_ITEMS), thumbs, t),
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
  t: Translate = english,
): string | undefined {
  const name = (f: string) => f.split('/').pop() ?? f;
  const missing = [...(ea?.predictions.length ? [] : [name(a)]), ...(eb?.predictions.length ? [] : [name(b)])];
  if (missing.length)
    return t(
      "Evaluate {0} first (an evaluation keeps each image's prediction), on the same data for both.",
      joined(missing, t),
    );
  if (ea!.data !== eb!.data)
    return t(
      '{0} was evaluated on {1} and {2} on {3}: evaluate both on the same folder.',
      name(a),
      ea!.data,
      name(b),
      eb!.data,
    );
  if (ea!.classes.join('\n') !== eb!.classes.join('\n')) return t('The two evaluations have different classes.');
  return undefined;
}

/** Two checkpoints by their predictions: accuracy and per-class recall on the common images, and the changed ones. */
export async function predictionsCompareView(
  a: string,
  b: string,
  ea: EvalResult,
  eb: EvalResult,
  thumbs: ThumbsOf,
  t: Translate = english,
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
    items: await withThumbs(ea.data, picked, thumbs, t),
  };
}
