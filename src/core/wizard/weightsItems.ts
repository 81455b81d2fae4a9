// The pretrained step (short and full path) lists the catalog's weights (runner/ascend_finetune/
// weights_catalog.json: mindcv's files, then timm's repositories on the Hugging Face hub) for the chosen
// backbone, and a row opening the whole catalog
// grouped by family (another backbone's weights, which change the backbone). A pure model: each item says
// whether the target's weights cache has the file ("cached on box") or picking it downloads it there
// ("downloads on box (97.8 MB)"), from the runner's `weights-status` when it has answered, and on its
// second line the catalog's facts (source, licence, size, ImageNet top-1).
import type { Translate } from '../l10n';
import { formatBytes } from '../checkpoints/manifest';
import { catalogSources, weightsFacts, type NamedWeights } from '../spec/weightSources';
import type { CacheEntry } from '../targets/weightsCache';

export interface CatalogWeightsItem {
  label: string;
  description: string;
  detail: string;
  /** The model.pretrained value, e.g. `mindcv:resnet50`. */
  value: string;
  /** In the target's cache (undefined: not known yet, or the listing failed). */
  cached?: boolean;
}

/** Where the file stands on the target, and what picking it does. */
export function cacheNote(
  w: NamedWeights,
  entry: CacheEntry | undefined,
  targetLabel: string,
  t: Translate,
): { text: string; cached?: boolean } {
  if (!entry)
    return {
      text:
        w.source === 'timm'
          ? t('timm weights from the Hugging Face hub, fetched on {0} and cached', targetLabel)
          : t('ImageNet weights (mindcv), fetched on {0} and cached', targetLabel),
    };
  if (entry.state === 'cached')
    return { text: t('cached on {0} ({1})', targetLabel, formatBytes(entry.bytes)), cached: true };
  // A catalog entry without a recorded size says nothing about it rather than "(?)".
  const size = w.sizeBytes === undefined ? undefined : formatBytes(w.sizeBytes);
  // The runner refuses a damaged file rather than replace it (a shared cache may not be ours to delete
  // in), so the row says what to do instead of promising a download.
  if (entry.state === 'damaged')
    return {
      text: t('damaged in the cache on {0}: delete {1} there to download it again', targetLabel, entry.path),
      cached: false,
    };
  if (entry.state !== 'missing')
    return {
      text: size
        ? t('downloads on {0} ({1}): the file in its cache is not used ({2})', targetLabel, size, entry.why ?? '')
        : t('downloads on {0}: the file in its cache is not used ({1})', targetLabel, entry.why ?? ''),
      cached: false,
    };
  const part = entry.partBytes > 0 ? formatBytes(entry.partBytes) : undefined;
  const amount = part ? (size ? t('{0}, {1} already there', size, part) : t('{0} already there', part)) : size;
  return {
    text: amount ? t('downloads on {0} ({1})', targetLabel, amount) : t('downloads on {0}', targetLabel),
    cached: false,
  };
}

function catalogItem(
  w: NamedWeights,
  targetLabel: string,
  t: Translate,
  cache?: ReadonlyMap<string, CacheEntry>,
): CatalogWeightsItem {
  const note = cacheNote(w, cache?.get(w.value), targetLabel, t);
  return {
    label: t('$(cloud-download) {0}', w.value),
    description: t('{0}; backbone {1}', note.text, w.backbone),
    detail: weightsFacts(w, t),
    value: w.value,
    cached: note.cached,
  };
}

/** The pretrained step's own rows: one item per catalog source that loads into `backbone`. */
export function catalogWeightsItems(
  backbone: string,
  targetLabel: string,
  t: Translate,
  sources: NamedWeights[] = catalogSources(),
  cache?: ReadonlyMap<string, CacheEntry>,
): CatalogWeightsItem[] {
  return sources.filter((w) => w.backbone === backbone).map((w) => catalogItem(w, targetLabel, t, cache));
}

/** A family's heading in the whole catalog (a quick-pick separator in the editor). */
export interface FamilyHeading {
  family: string;
}

/**
 * The whole catalog, for "Weights of another backbone…": the families in alphabetical order, each
 * under its heading, its sources in the catalog's order (mindcv's first, resnet18 before resnet50:
 * smallest first; then timm's).
 */
export function catalogByFamily(
  targetLabel: string,
  t: Translate,
  sources: NamedWeights[] = catalogSources(),
  cache?: ReadonlyMap<string, CacheEntry>,
): (CatalogWeightsItem | FamilyHeading)[] {
  const families = new Map<string, NamedWeights[]>();
  for (const w of sources) {
    const f = w.family ?? w.backbone;
    families.set(f, [...(families.get(f) ?? []), w]);
  }
  return [...families.keys()]
    .sort()
    .flatMap((f) => [{ family: f }, ...(families.get(f) ?? []).map((w) => catalogItem(w, targetLabel, t, cache))]);
}

/**
 * The row that opens the whole catalog. For a backbone the catalog has no weights for, it says so:
 * the step then offers only None, a file, or another backbone's weights.
 */
export function otherBackboneRow(
  backbone: string,
  t: Translate,
  sources: NamedWeights[] = catalogSources(),
): { label: string; description: string } {
  const own = sources.some((w) => w.backbone === backbone);
  return {
    label: t('$(list-tree) Weights of another backbone…'),
    description: own
      ? t('the whole catalog by family; picking one changes the backbone to match')
      : t("no catalog weights for {0}: pick another backbone's, and the backbone changes to match", backbone),
  };
}
