// What the Start wizard learns about a data folder or a weights file on any target, through the
// runner's `probe` there: the same counts and typical image size for an SSH machine's folder as
// imageFolders.ts reads on this one, and the backbone a run's checkpoint was trained with. No vscode.
import type { PathFact } from '../../shared/specProtocol';
import { BACKBONES, type Backbone } from '../spec/builder';
import { probePaths } from '../spec/paths';
import type { RunOptions } from '../targets/runnerCli';
import type { Target } from '../targets/target';
import type { DataFacts } from './defaults';

/** What the weights file says about the run that should use it (a run's own checkpoint only). */
export interface WeightsFacts {
  backbone?: string;
  imageSize?: number;
  /** A catalog source (`mindcv:resnet18`): its file loads into its own backbone and no other. */
  catalog?: boolean;
}

/** A probed folder's counts as the wizard's DataFacts; nothing for a file or a missing path. */
export function dataFactsOf(f: PathFact): DataFacts {
  if (f.kind !== 'folder' || f.count < 2 || !f.images) return {};
  const size = typeof f.typical_size === 'number' && f.typical_size > 0 ? f.typical_size : undefined;
  return { classes: f.count, images: f.images, typicalSize: size };
}

/** A probed checkpoint's backbone and image size, when it lies in a run directory with a spec. */
export function weightsFactsOf(f: PathFact): WeightsFacts {
  if (f.kind !== 'file' || !f.run || typeof f.run.backbone !== 'string') return {};
  const size = f.run.image_size;
  return { backbone: f.run.backbone, imageSize: typeof size === 'number' && size > 0 ? size : undefined };
}

/**
 * The backbone a run starting from these weights should build: the one the weights were trained as
 * (a resnet18 file cannot load into a resnet50), unless the user chose one or the file does not say.
 * A catalog source picked (another backbone's, from the whole catalog) wins over a chosen backbone:
 * picking it is choosing its backbone.
 */
export function backboneForWeights(current: Backbone, w: WeightsFacts, userChose: boolean): Backbone {
  const b = w.backbone;
  return (!userChose || w.catalog) && b && (BACKBONES as readonly string[]).includes(b) ? (b as Backbone) : current;
}

export async function probeData(target: Target, dir: string, opts: RunOptions = {}): Promise<DataFacts> {
  const [f] = await probePaths(target, [dir], opts);
  return f ? dataFactsOf(f) : {};
}

export async function probeWeights(target: Target, file: string, opts: RunOptions = {}): Promise<WeightsFacts> {
  const [f] = await probePaths(target, [file], opts);
  return f ? weightsFactsOf(f) : {};
}
