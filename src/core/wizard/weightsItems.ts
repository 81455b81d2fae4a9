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
  // A catalog entry without a recorded size says nothing about it rather than "(?)".
  const size = w.sizeBytes === undefined ? undefined : formatBytes(w.sizeBytes);
  if (entry.state === 'damaged')
    return {
      text: size
        ? t('downloads again on {0} ({1}): the cached file is damaged', targetLabel, size)
        : t('downloads again on {0}: the cached file is damaged', targetLabel),
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
