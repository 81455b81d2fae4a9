// The catalog part of the pretrained step, shared by the short path and the full wizard: the mindcv
// items at once, then again with the target's cache state when its runner's `weights-status` answers
// ("cached on box" / "downloads on box (97.8 MB)"); for an SSH target an item to download on this
// machine and copy (the air-gapped path). Picking an item that is not cached downloads it on the
// target at once, in a notification that can be cancelled, so the run does not start with a long
// silent download; a failed download says why and, for an SSH target, offers the copy from here.
import * as vscode from 'vscode';
import type { Translate } from '../../core/l10n';
import type { TargetDef } from '../../core/targets/model';
import { mindcvSources } from '../../core/spec/weightSources';
import { FetchCancelled, fetchWeights, weightsCacheListing } from '../../core/targets/weightsCache';
import { catalogWeightsItems, type CatalogWeightsItem } from '../../core/wizard/weightsItems';
import { copyToTarget, downloadHere } from '../copyWeights';
import { weightsChanged } from '../specLanguage';
import type { App } from '../app';
import { errorText } from '../context';

export type CatalogItem = vscode.QuickPickItem & {
  value?: string | null;
  /** A catalog source; `cached` is its state on the target once known. */
  catalog?: true;
  cached?: boolean;
  copyFromHere?: true;
};

const translate: Translate = (message, ...args) => vscode.l10n.t(message, ...args);

const asItem = (i: CatalogWeightsItem): CatalogItem => ({ ...i, catalog: true });

/** The catalog items now, and the same items with the cache state once the target answered. */
export function catalogItems(
  app: App,
  def: TargetDef,
  backbone: string,
  /** Only the sources that load into `backbone` (the full wizard, where the backbone was chosen before). */
  only = false,
): { now: CatalogItem[]; later: Promise<CatalogItem[]> } {
  const sources = mindcvSources().filter((w) => !only || w.backbone === backbone);
  const copy: CatalogItem[] =
    def.kind === 'ssh'
      ? [
          {
            label: vscode.l10n.t('$(cloud-upload) Download on this machine, copy to {0}…', def.label),
            description: vscode.l10n.t('for a target without internet'),
            copyFromHere: true,
          },
        ]
      : [];
  const now = [...catalogWeightsItems(backbone, def.label, translate, sources).map(asItem), ...copy];
  const later = (async () => {
    await app.ctx.ensureRunner(def);
    const cache = await weightsCacheListing(app.ctx.transport(def), [], { timeoutMs: 60_000 });
    return [...catalogWeightsItems(backbone, def.label, translate, sources, cache).map(asItem), ...copy];
  })().catch((e: unknown) => {
    app.ctx.log.warn(`weights-status on ${def.label}: ${e instanceof Error ? e.message : String(e)}`);
    return now; // the items without the cache state: the run still downloads what is missing
  });
  return { now, later };
}

/** A catalog item, or the copy-from-here item: what afterCatalogPick handles. */
export function isCatalogPick(item: CatalogItem): boolean {
  return item.copyFromHere === true || (item.catalog === true && item.cached !== true);
}

/**
 * After a pick: the value for model.pretrained, or undefined when the user left. A catalog item not
 * cached on the target is downloaded there now; "copy from here" asks which source, then copies.
 */
export async function afterCatalogPick(
  app: App,
  def: TargetDef,
  backbone: string,
  item: CatalogItem,
  later: Promise<CatalogItem[]>,
): Promise<string | undefined> {
  if (item.copyFromHere) {
    const items = catalogWeightsItems(backbone, def.label, translate);
    const r = await vscode.window.showQuickPick(items, {
      title: vscode.l10n.t('Download on this machine, copy to {0}…', def.label),
    });
    return r && (await copyFromHere(app, def, r.value)) ? r.value : undefined;
  }
  const value = item.value ?? undefined;
  // Picked before the target's listing came: wait for it (it is quick) to know whether to download.
  const cached = item.cached ?? (await later).find((i) => i.value === value)?.cached;
  if (value && cached === false) await downloadOnTarget(app, def, value);
  return value;
}

async function copyFromHere(app: App, def: TargetDef, source: string): Promise<boolean> {
  try {
    const got = await downloadHere(app, source);
    const r = await copyToTarget(app, def, got.path);
    app.ctx.log.info(`weights ${source} on ${def.label}: ${r.remotePath} (${r.outcome})`);
    return true;
  } catch (e) {
    void vscode.window.showErrorMessage(
      vscode.l10n.t('Could not copy {0} to {1}: {2}', source, def.label, e instanceof Error ? e.message : String(e)),
    );
    return false;
  }
}

/** Downloads `source` into the target's cache with a cancellable notification; failures say why. */
async function downloadOnTarget(app: App, def: TargetDef, source: string): Promise<void> {
  await app.ctx.ensureRunner(def);
  try {
    await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: vscode.l10n.t('Downloading {0} on {1}', source, def.label),
        cancellable: true,
      },
      async (progress, token) => {
        let shown = 0;
        const run = fetchWeights(app.ctx.transport(def), source, (done, total) => {
          const mb = (n: number) => (n / 1e6).toFixed(1);
          if (total === null) return progress.report({ message: vscode.l10n.t('{0} MB', mb(done)) });
          const pct = (100 * done) / Math.max(total, 1);
          progress.report({ increment: pct - shown, message: vscode.l10n.t('{0} of {1} MB', mb(done), mb(total)) });
          shown = pct;
        });
        token.onCancellationRequested(() => run.cancel());
        await run.result;
        weightsChanged(app, def.id);
      },
    );
  } catch (e) {
    if (e instanceof FetchCancelled) {
      void vscode.window.showInformationMessage(
        vscode.l10n.t(
          'Download of {0} on {1} cancelled: the run downloads it when it starts, resuming the partial file.',
          source,
          def.label,
        ),
      );
      return;
    }
    const why = errorText(e);
    const copy = vscode.l10n.t('Copy from This Machine');
    const choice = await vscode.window.showErrorMessage(
      vscode.l10n.t('Downloading {0} on {1} failed: {2}', source, def.label, why),
      ...(def.kind === 'ssh' ? [copy] : []),
    );
    if (choice === copy) await copyFromHere(app, def, source);
  }
}
