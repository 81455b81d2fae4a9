// The `auto` parts of a run resolved for the target and the data before the wizard's summary: what
// the reference recipe assumes (an Ascend NPU, a long run on a big data set) is adjusted to what the
// target's `doctor` and the data folder say, so the pre-flight (`validate --preflight`, the run's
// own `warning` events) never warns about a value the tool chose itself. What the user changes
// afterwards is theirs, warnings included.
import { specDefault } from '../spec/fields';
import { english, type Translate } from '../l10n';
import type { Health } from './health';

/** What the data folder looks like (local scan; unknown on a remote target). */
export interface DataFacts {
  images?: number;
  classes?: number;
  /** The typical (median) shorter side of the images, in pixels. */
  typicalSize?: number;
}

/** The settings the wizard decides rather than asks; all written into the spec. */
export interface ResolvedDefaults {
  ampLevel: 'O0' | 'O2';
  lossScale: 'dynamic' | 'none';
  sink: boolean;
  workers: number;
  checkpointEverySteps: number;
  imageSize: number;
  batchSize: number;
  /** Why each value differs from the recipe's, for the summary's descriptions. */
  reasons: Partial<
    Record<'ampLevel' | 'sink' | 'workers' | 'checkpointEverySteps' | 'imageSize' | 'batchSize', string>
  >;
}

const RECIPE = {
  ampLevel: specDefault('amp.level') as 'O2',
  workers: specDefault('data.workers') as number,
  every: specDefault('checkpoint.every_steps') as number,
  imageSize: specDefault('data.image_size') as number,
  batchSize: specDefault('data.batch_size') as number,
  valSplit: specDefault('data.val_split') as number,
  minImage: 16,
};

/** The backbones' input size: ResNets are trained at 224 px, and nothing is gained above it from small images. */
export const BACKBONE_IMAGE_SIZE = RECIPE.imageSize;

/** Images in the training part of a folder split by `val_split` (the runner's stratified split, near enough). */
export function trainImages(images: number, valSplit = RECIPE.valSplit): number {
  return Math.max(0, images - Math.round(images * valSplit));
}

/** The image size for the data: its typical size, at least the schema's minimum, at most the backbone's. */
export function imageSizeFor(typicalSize: number | undefined): number {
  if (typicalSize === undefined || !Number.isFinite(typicalSize)) return BACKBONE_IMAGE_SIZE;
  return Math.min(BACKBONE_IMAGE_SIZE, Math.max(RECIPE.minImage, Math.round(typicalSize)));
}

export interface ResolveInput {
  health: Health | undefined;
  data: DataFacts;
  epochs: number;
  /** Devices per node. */
  devices: number;
  /** The batch size the user picked, if they did (else the recipe's, capped for the data). */
  batchSize?: number;
  /** Words the reasons are given in (the glue passes vscode.l10n.t). */
  t?: Translate;
}

export function resolveDefaults(i: ResolveInput): ResolvedDefaults {
  const reasons: ResolvedDefaults['reasons'] = {};
  const t = i.t ?? english;
  const cpu = i.health?.ok === true && i.health.cpuOnly;
  const ampLevel = cpu ? 'O0' : RECIPE.ampLevel;
  if (cpu) reasons.ampLevel = t('fp32: this target has no NPU (mixed precision helps only on Ascend)');
  if (cpu) reasons.sink = t('off: sink mode is for Ascend');
  const ranks = Math.max(1, i.devices);
  let workers = RECIPE.workers;
  const cores = i.health?.ok === true ? i.health.cpuCount : undefined;
  if (workers === 0) {
    // 0 is the runner's "the cores available per rank": shown resolved when the target's cores are known.
    if (cores !== undefined) {
      workers = Math.max(1, Math.floor(cores / ranks));
      reasons.workers =
        ranks === 1
          ? cores === 1
            ? t('1 CPU core over 1 rank')
            : t('{0} CPU cores over 1 rank', cores)
          : cores === 1
            ? t('1 CPU core over {0} ranks', ranks)
            : t('{0} CPU cores over {1} ranks', cores, ranks);
    }
  } else if (cores !== undefined && workers * ranks > cores) {
    workers = Math.max(1, Math.floor(cores / ranks));
    reasons.workers = cores === 1 ? t('1 CPU core') : t('{0} CPU cores', cores);
  }
  const train = i.data.images === undefined ? undefined : trainImages(i.data.images);
  let batchSize = i.batchSize ?? RECIPE.batchSize;
  if (i.batchSize === undefined && train !== undefined && train > 0 && batchSize * ranks > train) {
    batchSize = Math.max(1, Math.floor(train / ranks));
    reasons.batchSize = t('{0} training images', train);
  }
  let every = RECIPE.every;
  if (train !== undefined && train > 0) {
    const perEpoch = Math.max(1, Math.floor(train / (batchSize * ranks)));
    if (every > perEpoch) {
      every = perEpoch;
      reasons.checkpointEverySteps =
        perEpoch === 1 ? t('once per epoch (1 step)') : t('once per epoch ({0} steps)', perEpoch);
    }
  }
  const imageSize = imageSizeFor(i.data.typicalSize);
  if (imageSize !== BACKBONE_IMAGE_SIZE) reasons.imageSize = t('the images are about {0} px', i.data.typicalSize ?? '');
  return {
    ampLevel,
    lossScale: ampLevel === 'O0' ? 'none' : 'dynamic',
    sink: !cpu,
    workers,
    checkpointEverySteps: every,
    imageSize,
    batchSize,
    reasons,
  };
}
