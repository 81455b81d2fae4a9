// The pretrained step (short and full path) lists the mindcv catalog's ImageNet weights (runner/
// ascend_finetune/weights_catalog.json), the chosen backbone's first. A pure model: each item says
// whether the target's weights cache has the file ("cached on box") or picking it downloads it there
// ("downloads on box (97.8 MB)"), from the runner's `weights-status` when it has answered, and on its
// second line the catalog's facts (source, licence, size, ImageNet top-1).
import type { Translate } from '../l10n';
import { formatBytes } from '../checkpoints/manifest';
import { mindcvSources, weightsFacts, type NamedWeights } from '../spec/weightSources';
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
  if (!entry) return { text: t('ImageNet weights (mindcv), fetched on {0} and cached', targetLabel) };
  if (entry.state === 'cached')
    return { text: t('cached on {0} ({1})', targetLabel, formatBytes(entry.bytes)), cached: true };
  const size = formatBytes(w.sizeBytes ?? null);
  if (entry.state === 'damaged')
    return { text: t('downloads again on {0} ({1}): the cached file is damaged', targetLabel, size), cached: false };
  if (entry.state !== 'missing')
    return {
      text: t('downloads on {0} ({1}): the file in its cache is not used ({2})', targetLabel, size, entry.why ?? ''),
      cached: false,
    };
  const amount = entry.partBytes > 0 ? t('{0}, {1} already there', size, formatBytes(entry.partBytes)) : size;
  return { text: t('downloads on {0} ({1})', targetLabel, amount), cached: false };
}

/** One quick-pick item per catalog source, those loading into `backbone` first (a stable sort). */
export function catalogWeightsItems(
  backbone: string,
  targetLabel: string,
  t: Translate,
  sources: NamedWeights[] = mindcvSources(),
  cache?: ReadonlyMap<string, CacheEntry>,
): CatalogWeightsItem[] {
  return [...sources]
    .sort((a, b) => Number(b.backbone === backbone) - Number(a.backbone === backbone))
    .map((w) => {
      const note = cacheNote(w, cache?.get(w.value), targetLabel, t);
      return {
        label: t('$(cloud-download) {0}', w.value),
        description: t('{0}; backbone {1}', note.text, w.backbone),
        detail: weightsFacts(w, t),
        value: w.value,
        cached: note.cached,
      };
    });
}
