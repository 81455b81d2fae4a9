// The data a run is about to train on and the weights it starts from, as the target sees them (a
// folder of this machine is read here; another machine's through the runner's `probe` there), and
// the defaults resolved for them and the target.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { WizardChoices } from '../../core/spec/builder';
import type { TargetDef } from '../../core/targets/model';
import { resolveDefaults, type DataFacts, type ResolvedDefaults } from '../../core/wizard/defaults';
import { describeImageFolder, findImageFolders, type ImageFolder } from '../../core/wizard/imageFolders';
import { probeData, probeWeights, type WeightsFacts } from '../../core/wizard/targetData';
import type { App } from '../app';
import { errorText } from '../context';
import { translate } from '../l10n';

const PROBE_TIMEOUT_MS = 60_000;

/** Counts and typical image size of a data folder on this machine; nothing for another machine's. */
export function describeLocalData(def: TargetDef, dataTrain: string | undefined): DataFacts {
  if (def.kind !== 'local' || !dataTrain || !path.isAbsolute(dataTrain)) return {};
  const f = describeImageFolder(dataTrain);
  return f ? { images: f.images, classes: f.classes, typicalSize: f.typicalSize } : {};
}

/** Counts and typical image size of a data folder on any target (an SSH one through `probe`); {} when unknown. */
export async function describeData(app: App, def: TargetDef, dataTrain: string | undefined): Promise<DataFacts> {
  if (def.kind === 'local' || !dataTrain) return describeLocalData(def, dataTrain);
  try {
    await app.ctx.ensureRunner(def);
    return await probeData(app.ctx.transport(def), dataTrain, { timeoutMs: PROBE_TIMEOUT_MS });
  } catch (e) {
    app.ctx.log.warn(`probing ${dataTrain} on ${def.label}: ${errorText(e)}`);
    return {};
  }
}

/** The backbone a weights file was trained as (a run's own checkpoint), on any target; {} when unknown. */
export async function describeWeights(app: App, def: TargetDef, file: string): Promise<WeightsFacts> {
  try {
    await app.ctx.ensureRunner(def);
    return await probeWeights(app.ctx.transport(def), file, { timeoutMs: PROBE_TIMEOUT_MS });
  } catch (e) {
    app.ctx.log.warn(`probing ${file} on ${def.label}: ${errorText(e)}`);
    return {};
  }
}

/** Image folders in the workspace's folders (on this machine). */
export function workspaceImageFolders(): ImageFolder[] {
  return (vscode.workspace.workspaceFolders ?? [])
    .filter((f) => f.uri.scheme === 'file')
    .flatMap((f) => findImageFolders(f.uri.fsPath));
}

/** The run's `auto` parts for this target (its last doctor) and data. */
export function resolvedFor(
  app: App,
  def: TargetDef,
  c: Partial<WizardChoices>,
  data: DataFacts,
  userBatch?: number,
): ResolvedDefaults {
  return resolveDefaults({
    health: app.targets.health(def),
    data,
    epochs: c.epochs ?? 1,
    devices: c.deviceIds?.length ?? c.devices ?? 1,
    batchSize: userBatch,
    t: translate,
  });
}
