// The catalog part of the pretrained step, shared by the short path and the full wizard: the chosen
// backbone's catalog items (mindcv's file, then timm's hub repositories under their own heading) at once, then again with the target's cache state when its runner's
// `weights-status` answers ("cached on box" / "downloads on box (97.8 MB)"); a row opening the whole
// catalog by family ("Weights of another backbone…"); for an SSH target an item to download on this
// machine and copy (the air-gapped path). Picking an item that is not cached downloads it on the
// target at once, in a notification that can be cancelled, so the run does not start with a long
// silent download; a failed download says why and, for an SSH target, offers the copy from here.
import * as vscode from 'vscode';
import type { Translate } from '../../core/l10n';
import type { TargetDef } from '../../core/targets/model';
import { backboneOfNamed } from '../../core/spec/weightSources';
import { FetchCancelled, fetchWeights, weightsCacheListing, type CacheEntry } from '../../core/targets/weightsCache';
import {
  catalogByFamily,
  catalogWeightsItems,
  otherBackboneRow,
  type CatalogWeightsItem,
} from '../../core/wizard/weightsItems';
import { BACK, pick, type StepInfo } from '../quickInput';
import { CopyCancelled, copyToTarget, downloadHere } from '../copyWeights';
import { weightsChanged } from '../specLanguage';
import type { App } from '../app';
import { errorText } from '../context';

export type CatalogItem = vscode.QuickPickItem & {
  value?: string | null;
  /** A catalog source; `cached` is its state on the target once known. */
  catalog?: true;
  cached?: boolean;
  copyFromHere?: true;
  /** "Weights of another backbone…": opens the whole catalog. */
  otherBackbone?: true;
};

const translate: Translate = (message, ...args) => vscode.l10n.t(message, ...args);

const asItem = (i: CatalogWeightsItem): CatalogItem => ({ ...i, catalog: true });

export interface Catalog {
  /** The step's rows: the backbone's catalog weights, copy from here (SSH), another backbone's. */
  now: CatalogItem[];
  /** The same once the target's cache listing answered. */
  later: Promise<CatalogItem[]>;
  /** The whole catalog under its families' separators, now and with the cache state. */
  all: { now: CatalogItem[]; later: Promise<CatalogItem[]> };
}

/** The catalog rows for `backbone` and the whole catalog, now and with the target's cache state. */
export function catalogItems(app: App, def: TargetDef, backbone: string): Catalog {
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
  const other: CatalogItem = { ...otherBackboneRow(backbone, translate), otherBackbone: true };
  // mindcv's file and the actions first; timm's repositories (up to 18 for one backbone) last, under
  // their own heading, so the actions stay on the first screen (placeBrowse keeps Browse above them).
  const rows = (cache?: ReadonlyMap<string, CacheEntry>): CatalogItem[] => {
    const items = catalogWeightsItems(backbone, def.label, translate, undefined, cache).map(asItem);
    const hub = items.filter((i) => i.value?.startsWith('hf-hub:'));
    return [
      ...items.filter((i) => !hub.includes(i)),
      ...copy,
      other,
      ...(hub.length
        ? [{ label: vscode.l10n.t('timm · Hugging Face hub'), kind: vscode.QuickPickItemKind.Separator }, ...hub]
        : []),
    ];
  };
  const all = (cache?: ReadonlyMap<string, CacheEntry>): CatalogItem[] =>
    catalogByFamily(def.label, translate, undefined, cache).map((i) =>
      'family' in i ? { label: i.family, kind: vscode.QuickPickItemKind.Separator } : asItem(i),
    );
  const cache = (async () => {
    await app.ctx.ensureRunner(def);
    return await weightsCacheListing(app.ctx.transport(def), [], { timeoutMs: 60_000 });
  })().catch((e: unknown) => {
    app.ctx.log.warn(`weights-status on ${def.label}: ${e instanceof Error ? e.message : String(e)}`);
    return undefined; // the items without the cache state: the run still downloads what is missing
  });
  return { now: rows(), later: cache.then(rows), all: { now: all(), later: cache.then(all) } };
}

/** The step's catalog rows with `browse` after the actions, above timm's section (if any). */
export function placeBrowse<T extends vscode.QuickPickItem>(cat: T[], browse: T): T[] {
  const at = cat.findIndex((i) => i.kind === vscode.QuickPickItemKind.Separator);
  return at < 0 ? [...cat, browse] : [...cat.slice(0, at), browse, ...cat.slice(at)];
}

/** A catalog item, copy-from-here or another backbone's: what afterCatalogPick handles. */
export function isCatalogPick(item: CatalogItem): boolean {
  return item.copyFromHere === true || item.otherBackbone === true || (item.catalog === true && item.cached !== true);
}

/**
 * After a pick: the value for model.pretrained, or undefined when the user left (the caller shows its
 * step again). "Another backbone" and "copy from here" first ask which source, in the whole catalog;
 * a catalog item not cached on the target is downloaded there now. The caller sets the backbone a
 * source of another backbone loads into (backboneForWeights).
 */
export async function afterCatalogPick(
  app: App,
  def: TargetDef,
  backbone: string,
  item: CatalogItem,
  catalog: Catalog,
  info: StepInfo,
): Promise<string | undefined> {
  const whole = async (placeholder: string): Promise<CatalogItem | undefined> => {
    const own = catalog.all.now.find((i) => i.catalog && backboneOfNamed(i.value ?? '') === backbone);
    const r = await pick<CatalogItem>({
      ...info,
      back: true,
      items: catalog.all.now,
      later: catalog.all.later,
      placeholder,
      active: own?.label,
    });
    return r === BACK ? undefined : r;
  };
  if (item.copyFromHere) {
    const r = await whole(vscode.l10n.t('Download on this machine, copy to {0}…', def.label));
    return r?.value && (await copyFromHere(app, def, r.value)) ? r.value : undefined;
  }
  const chosen = item.otherBackbone
    ? await whole(vscode.l10n.t('Weights of any backbone in the catalog: picking one changes the backbone to match'))
    : item;
  const value = chosen?.value ?? undefined;
  if (!chosen || !value) return undefined;
  // Picked before the target's listing came: wait for it (it is quick) to know whether to download.
  const cached = chosen.cached ?? (await catalog.all.later).find((i) => i.value === value)?.cached;
  if (cached === false) await downloadOnTarget(app, def, value);
  return value;
}

async function copyFromHere(app: App, def: TargetDef, source: string): Promise<boolean> {
  try {
    const got = await downloadHere(app, source);
    const r = await copyToTarget(app, def, got.path);
    app.ctx.log.info(`weights ${source} on ${def.label}: ${r.remotePath} (${r.outcome})`);
    return true;
  } catch (e) {
    if (e instanceof CopyCancelled)
      void vscode.window.showInformationMessage(e.message); // says what stays
    else
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
        const got = await run.result;
        weightsChanged(app, def.id);
        if (got.nameHash?.ok === false)
          void vscode.window.showWarningMessage(
            vscode.l10n.t(
              "{0} on {1}: the file's sha256 {2} does not begin with {3}, the hash its name carries (mindcv names its files by their sha256), so it may not be mindcv's file. Runs with it warn; if you trust it, pin it: {0}#sha256={2}",
              source,
              def.label,
              got.sha256,
              got.nameHash.expected,
            ),
          );
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
