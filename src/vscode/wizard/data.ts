// The data a run is about to train on, as far as this machine can see it (a folder of this machine
// is scanned; another machine's is not), and the defaults resolved for it and the target.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { WizardChoices } from '../../core/spec/builder';
import type { TargetDef } from '../../core/targets/model';
import { resolveDefaults, type DataFacts, type ResolvedDefaults } from '../../core/wizard/defaults';
import { describeImageFolder, findImageFolders, type ImageFolder } from '../../core/wizard/imageFolders';
import type { App } from '../app';

/** Counts and typical image size of a data folder on this machine; nothing for another machine's. */
export function describeLocalData(def: TargetDef, dataTrain: string | undefined): DataFacts {
  if (def.kind !== 'local' || !dataTrain || !path.isAbsolute(dataTrain)) return {};
  const f = describeImageFolder(dataTrain);
  return f ? { images: f.images, classes: f.classes, typicalSize: f.typicalSize } : {};
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
  });
}
