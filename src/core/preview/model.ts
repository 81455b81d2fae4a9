// The Preview Data panel's view model, built from the runner's `preview` document and `predict`
// answer (docs/protocol.md, section 4). The runner's output is checked here, field by field, so a
// runner of another version gives one clear error instead of a panel that breaks on a missing field.
import * as path from 'node:path';
import type {
  ClassBar,
  ClassifyView,
  Percentiles,
  PredictionView,
  PreviewView,
  ProblemView,
  SizeStats,
  Thumb,
} from '../../shared/previewProtocol';
import { english, joined, WordedError, type Translate } from '../l10n';
import { warningText } from '../runs/runnerCodes';
import { wordedRunnerError } from '../runs/runnerErrors';
import type { Wording } from '../runs/wording';

/** Files listed per warning in the panel: the runner lists up to 100, the panel shows the first ones. */
export const FILES_PER_PROBLEM = 50;

export class PreviewFormatError extends WordedError {
  constructor(field: string, want: string) {
    super((t) =>
      t('the runner\'s preview answer has no valid "{0}" ({1}): is the runner on the target current?', field, want),
    );
    this.name = 'PreviewFormatError';
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
function obj(o: Obj, k: string, where = k): Obj {
  const v = o[k];
  if (!isObj(v)) throw new PreviewFormatError(where, 'an object');
  return v;
}
function num(o: Obj, k: string, where = k): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new PreviewFormatError(where, 'a number');
  return v;
}
function str(o: Obj, k: string, where = k): string {
  const v = o[k];
  if (typeof v !== 'string') throw new PreviewFormatError(where, 'a string');
  return v;
}
function arr(o: Obj, k: string, where = k): unknown[] {
  const v = o[k];
  if (!Array.isArray(v)) throw new PreviewFormatError(where, 'a list');
  return v;
}
const optStr = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The last line of a preview's stdout is the answer; earlier `{"progress": ...}` lines are progress. */
export function progressOf(line: unknown): { done: number; total: number } | undefined {
  if (!isObj(line) || !isObj(line.progress)) return undefined;
  const { done, total } = line.progress;
  return typeof done === 'number' && typeof total === 'number' ? { done, total } : undefined;
}

function percentiles(v: unknown, where: string): Percentiles | null {
  if (v === null) return null;
  if (!isObj(v)) throw new PreviewFormatError(where, 'an object or null');
  return {
    min: num(v, 'min', `${where}.min`),
    p5: num(v, 'p5', `${where}.p5`),
    p50: num(v, 'p50', `${where}.p50`),
    p95: num(v, 'p95', `${where}.p95`),
    max: num(v, 'max', `${where}.max`),
  };
}

function counts(o: Obj): [string, number][] {
  return Object.entries(o)
    .filter((e): e is [string, number] => typeof e[1] === 'number')
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

function sizes(doc: Obj): SizeStats {
  const im = obj(doc, 'images');
  return {
    count: num(im, 'count', 'images.count'),
    width: percentiles(im.width, 'images.width'),
    height: percentiles(im.height, 'images.height'),
    modes: counts(obj(im, 'modes', 'images.modes')),
    formats: counts(obj(im, 'formats', 'images.formats')),
    grayscale: num(im, 'grayscale', 'images.grayscale'),
    alpha: num(im, 'alpha', 'images.alpha'),
  };
}

interface Member {
  file: string;
  class: string;
}
function members(v: unknown, where: string): Member[] {
  if (!Array.isArray(v)) throw new PreviewFormatError(where, 'a list');
  return v
    .filter(isObj)
    .map((m) => ({ file: str(m, 'file', `${where}.file`), class: str(m, 'class', `${where}.class`) }));
}

/**
 * The warnings, worst first: leakage, labels that disagree, duplicates, unreadable files, tiny
 * classes; in `t`'s language (one message per count form, so a language without plurals words it once).
 */
function problems(doc: Obj, t: Translate): ProblemView[] {
  const out: ProblemView[] = [];
  const dup = obj(doc, 'duplicates');
  const groups = arr(dup, 'groups', 'duplicates.groups')
    .filter(isObj)
    .map((g, i) => ({
      train: members(g.train, `duplicates.groups[${i}].train`),
      val: members(g.val, `duplicates.groups[${i}].val`),
    }));
  const leftOut = num(dup, 'left_out', 'duplicates.left_out');
  const cap = (files: { path: string; note: string }[], more = 0) => ({
    files: files.slice(0, FILES_PER_PROBLEM),
    more: more + Math.max(0, files.length - FILES_PER_PROBLEM),
  });

  const tv = obj(dup, 'train_val', 'duplicates.train_val');
  const valFiles = num(tv, 'val_files', 'duplicates.train_val.val_files');
  if (valFiles > 0) {
    const files = groups
      .filter((g) => g.train.length && g.val.length)
      .flatMap((g) => g.val.map((v) => ({ path: v.file, note: t('copy of {0}', g.train[0].file) })));
    out.push({
      kind: 'leak',
      message:
        valFiles === 1
          ? t('1 validation image is a copy of training images (leakage: validation accuracy will read high)')
          : t(
              '{0} validation images are copies of training images (leakage: validation accuracy will read high)',
              valFiles,
            ),
      ...cap(files, Math.max(0, valFiles - files.length)),
    });
  }
  const conflicting = num(dup, 'conflicting_labels', 'duplicates.conflicting_labels');
  if (conflicting > 0) {
    const files = groups
      .filter((g) => new Set([...g.train, ...g.val].map((m) => m.class)).size > 1)
      .flatMap((g) => [...g.train, ...g.val].map((m) => ({ path: m.file, note: t('labelled {0}', m.class) })));
    out.push({
      kind: 'conflict',
      message:
        conflicting === 1
          ? t('1 image has identical copies in different classes (conflicting labels)')
          : t('{0} images have identical copies in different classes (conflicting labels)', conflicting),
      ...cap(files),
    });
  }
  const wt = obj(dup, 'within_train', 'duplicates.within_train');
  const extra = num(wt, 'extra_files', 'duplicates.within_train.extra_files');
  if (extra > 0) {
    const files = groups
      .filter((g) => g.train.length > 1)
      .flatMap((g) => g.train.slice(1).map((m) => ({ path: m.file, note: t('same as {0}', g.train[0].file) })));
    const n = num(wt, 'groups', 'duplicates.within_train.groups');
    const inGroups = n === 1 ? t('1 group') : t('{0} groups', n);
    const said =
      extra === 1
        ? t('1 training image is an exact duplicate of another (in {0})', inGroups)
        : t('{0} training images are exact duplicates of another (in {1})', extra, inGroups);
    out.push({
      kind: 'duplicate',
      message: leftOut ? t('{0}; {1} more groups not listed', said, leftOut) : said,
      ...cap(files, Math.max(0, extra - files.length)),
    });
  }
  const sk = obj(doc, 'skipped');
  const skCount = num(sk, 'count', 'skipped.count');
  if (skCount > 0) {
    const reasons = joined(
      counts(obj(sk, 'by_reason', 'skipped.by_reason')).map(([r, n]) => `${n} ${r}`),
      t,
    );
    const files = arr(sk, 'first', 'skipped.first')
      .filter(isObj)
      .map((f) => ({ path: str(f, 'path', 'skipped.first.path'), note: str(f, 'reason', 'skipped.first.reason') }));
    out.push({
      kind: 'skipped',
      message:
        skCount === 1
          ? t('1 file skipped by the scan ({0}): training will not see it', reasons)
          : t('{0} files skipped by the scan ({1}): training will not see them', skCount, reasons),
      ...cap(files, Math.max(0, skCount - files.length)),
    });
  }
  const nr = obj(doc, 'not_read');
  const nrCount = num(nr, 'count', 'not_read.count');
  if (nrCount > 0) {
    const files = arr(nr, 'first', 'not_read.first')
      .filter(isObj)
      .map((f) => ({ path: str(f, 'path', 'not_read.first.path'), note: str(f, 'reason', 'not_read.first.reason') }));
    out.push({
      kind: 'notRead',
      message:
        nrCount === 1
          ? t('1 image not read by the preview (links out of the folder, not regular files, or changed since the scan)')
          : t(
              '{0} images not read by the preview (links out of the folder, not regular files, or changed since the scan)',
              nrCount,
            ),
      ...cap(files, Math.max(0, nrCount - files.length)),
    });
  }
  const tiny = obj(doc, 'tiny');
  const tinyClasses = arr(tiny, 'classes', 'tiny.classes').filter((c): c is string => typeof c === 'string');
  if (tinyClasses.length) {
    const threshold = num(tiny, 'threshold', 'tiny.threshold');
    out.push({
      kind: 'tiny',
      message:
        tinyClasses.length === 1
          ? t('1 class with fewer than {0} training images: {1}', threshold, joined(tinyClasses, t))
          : t(
              '{0} classes with fewer than {1} training images: {2}',
              tinyClasses.length,
              threshold,
              joined(tinyClasses, t),
            ),
      files: [],
      more: 0,
    });
  }
  return out;
}

/**
 * The eval thumbnails' preprocessing in sentences (the runner's `thumbnails.preprocess`: the resize, crop
 * and mean/std the run will use, resolved without downloading): that first, then whether a hub config
 * or the weights are still to be read, why it could not be worked out, and the warnings the run will give. Empty when
 * the runner sent none.
 */
function evalNote(th: Obj, size: number, t: Translate): string[] {
  const p = th.preprocess;
  if (!isObj(p)) return [];
  const name = str(p, 'name', 'thumbnails.preprocess.name');
  const interpolation = str(p, 'interpolation', 'thumbnails.preprocess.interpolation');
  const resize = num(p, 'resize', 'thumbnails.preprocess.resize');
  const mean = arr(p, 'mean', 'thumbnails.preprocess.mean').map((x) => Math.round(Number(x) * 10) / 10);
  const std = arr(p, 'std', 'thumbnails.preprocess.std').map((x) => Math.round(Number(x) * 10) / 10);
  const geometry =
    p.crop_mode === 'squash'
      ? t('both sides resized to {0} px ({1}), centre crop {2} px', resize, interpolation, size)
      : t('shorter side resized to {0} px ({1}), centre crop {2} px', resize, interpolation, size);
  const out = [
    t('{0} preprocessing: {1}; mean {2}, std {3}', name, geometry, JSON.stringify(mean), JSON.stringify(std)),
  ];
  if (p.pending_config === true) {
    out.push(
      t(
        "The weights' config.json is not on this machine yet: the run reads it when it starts, which may change these values.",
      ),
    );
  }
  if (p.pending_weights === true) {
    out.push(
      t(
        "The weights are not on this machine yet: the run picks their preprocessing by the file it downloads (a PyTorch file gets torchvision's), which may change these values.",
      ),
    );
  }
  const unresolved = optStr(p.unresolved);
  if (unresolved) {
    out.push(t("The run's preprocessing could not be worked out here ({0}): the runner's own is shown.", unresolved));
  }
  const warnings = Array.isArray(p.warnings) ? p.warnings.filter(isObj) : [];
  for (const w of warnings) {
    const code = optStr(w.code);
    const message = optStr(w.message);
    if (code && message) out.push(warningText({ code, message, details: w.details }, { t }));
  }
  return out;
}

function thumbnails(doc: Obj, t: Translate): PreviewView['thumbnails'] {
  const th = obj(doc, 'thumbnails');
  return {
    evalNote: evalNote(th, num(doc, 'image_size'), t),
    shown: num(th, 'shown', 'thumbnails.shown'),
    leftOut: num(th, 'left_out', 'thumbnails.left_out'),
    bytes: num(th, 'bytes', 'thumbnails.bytes'),
    classes: arr(th, 'classes', 'thumbnails.classes')
      .filter(isObj)
      .map((c) => ({
        name: str(c, 'class', 'thumbnails.classes.class'),
        samples: arr(c, 'samples', 'thumbnails.classes.samples')
          .filter(isObj)
          .map((s): Thumb => ({
            file: str(s, 'file', 'thumbnails.samples.file'),
            original: str(s, 'original', 'thumbnails.samples.original'),
            train: optStr(s.train),
            eval: optStr(s.eval),
          })),
      })),
  };
}

/**
 * The panel's view of a `preview` document (throws PreviewFormatError naming the first bad field);
 * the sentences in `t`'s language, class names, files and the runner's reasons as sent.
 */
export function toPreviewView(raw: unknown, t: Translate = english): PreviewView {
  if (!isObj(raw)) throw new PreviewFormatError('(document)', 'a JSON object');
  const tiny = new Set(arr(obj(raw, 'tiny'), 'classes', 'tiny.classes'));
  const rows = arr(raw, 'classes')
    .filter(isObj)
    .map((c) => ({
      name: str(c, 'name', 'classes.name'),
      train: num(c, 'train', 'classes.train'),
      val: num(c, 'val', 'classes.val'),
      images: num(c, 'images', 'classes.images'),
    }));
  const most = Math.max(1, ...rows.map((c) => c.train));
  const classes: ClassBar[] = rows.map((c) => ({ ...c, share: c.train / most, tiny: tiny.has(c.name) }));
  const val = optStr(raw.val);
  const valSplit = typeof raw.val_split === 'number' ? raw.val_split : null;
  const seed = num(raw, 'seed');
  const split = val
    ? t('validation folder {0}', val)
    : valSplit
      ? t('{0}% of each class held out for validation (seed {1})', Math.round(valSplit * 1000) / 10, seed)
      : t('no validation set');
  let imbalance: PreviewView['imbalance'] = null;
  if (isObj(raw.imbalance) && classes.length > 1) {
    const im = raw.imbalance;
    const large = obj(im, 'largest', 'imbalance.largest');
    const small = obj(im, 'smallest', 'imbalance.smallest');
    const ratio = num(im, 'ratio', 'imbalance.ratio');
    const largest = str(large, 'class', 'imbalance.largest.class');
    const smallest = str(small, 'class', 'imbalance.smallest.class');
    imbalance = {
      ratio,
      largest,
      smallest,
      text: t(
        '{0}× ({1} {2} / {3} {4} training images)',
        Number(ratio.toPrecision(3)),
        largest,
        num(large, 'train'),
        smallest,
        num(small, 'train'),
      ),
    };
  }
  return {
    train: str(raw, 'train'),
    val,
    split,
    numTrain: num(raw, 'num_train'),
    numVal: num(raw, 'num_val'),
    imageSize: num(raw, 'image_size'),
    // A data.augment preset; runners before the presets answered a boolean.
    augment:
      typeof raw.augment === 'string' ? (raw.augment === 'none' ? null : raw.augment) : raw.augment ? 'basic' : null,
    classes,
    imbalance,
    problems: problems(raw, t),
    sizes: sizes(raw),
    thumbnails: thumbnails(raw, t),
    elapsedS: num(raw, 'elapsed_s'),
  };
}

/** The counts and problems in one line each (for a summary outside the panel). */
export function previewSummary(v: PreviewView, t: Translate = english): { counts: string; problems: string } {
  const n = v.classes.length;
  const images =
    n === 1
      ? t('1 class, {0} train / {1} val images', v.numTrain, v.numVal)
      : t('{0} classes, {1} train / {2} val images', n, v.numTrain, v.numVal);
  const counts = v.imbalance ? t('{0}, imbalance {1}×', images, Number(v.imbalance.ratio.toPrecision(3))) : images;
  const problems = v.problems.length ? v.problems.map((p) => p.message).join(t('; ')) : t('no problems found');
  return { counts, problems };
}

/** The Classify panel's view of a `predict` answer; `images` maps a file to its data: URL, when read. */
export function toClassifyView(
  raw: unknown,
  images: ReadonlyMap<string, string> = new Map(),
  /** The UI's language, to word a file's error from its code (runnerErrors.ts); without it, the runner's English. */
  words?: Wording,
): ClassifyView {
  if (!isObj(raw)) throw new PreviewFormatError('(document)', 'a JSON object');
  const predictions = arr(raw, 'predictions')
    .filter(isObj)
    .map((p, i): PredictionView => {
      const file = str(p, 'file', `predictions[${i}].file`);
      const base = { file, name: path.posix.basename(file.replace(/\\/g, '/')), image: images.get(file) ?? null };
      if (isObj(p.error)) {
        const kind = optStr(p.error.kind) ?? 'error';
        const worded = words && wordedRunnerError(p.error, words);
        return { ...base, top: null, error: `${kind}: ${worded?.message ?? optStr(p.error.message) ?? 'failed'}` };
      }
      const top = arr(p, 'top', `predictions[${i}].top`)
        .filter(isObj)
        .map((t) => ({ class: str(t, 'class', 'top.class'), prob: num(t, 'prob', 'top.prob') }));
      return { ...base, top, error: null };
    });
  return {
    ckpt: str(raw, 'ckpt'),
    classes: arr(raw, 'classes').length,
    device: optStr(raw.device) ?? '',
    predictions,
  };
}
