// The short path's pretrained step lists the mindcv catalog's ImageNet weights (runner/ascend_finetune/
// weights_catalog.json), the chosen backbone's first. A pure model: each item says where the weights
// are fetched and, on its second line, the catalog's facts (source, licence, size, ImageNet top-1).
import type { Translate } from '../l10n';
import { mindcvSources, weightsFacts, type NamedWeights } from '../spec/weightSources';

export interface CatalogWeightsItem {
  label: string;
  description: string;
  detail: string;
  /** The model.pretrained value, e.g. `mindcv:resnet50`. */
  value: string;
}

/** One quick-pick item per catalog source, those loading into `backbone` first (a stable sort). */
export function catalogWeightsItems(
  backbone: string,
  targetLabel: string,
  t: Translate,
  sources: NamedWeights[] = mindcvSources(),
): CatalogWeightsItem[] {
  return [...sources]
    .sort((a, b) => Number(b.backbone === backbone) - Number(a.backbone === backbone))
    .map((w) => ({
      label: t('$(cloud-download) {0}', w.value),
      description: t('ImageNet weights (mindcv), fetched on {0} and cached; backbone {1}', targetLabel, w.backbone),
      detail: weightsFacts(w, t),
      value: w.value,
    }));
}
