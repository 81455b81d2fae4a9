// `model.pretrained` values that name a source instead of a file (`mindcv:resnet50`,
// `hf-hub:timm/resnet50.a1_in1k`): the runner fetches them where the run executes
// (runner/ascend_finetune/models/catalog.py), so they are neither joined to the spec's folder nor
// checked as files here.

const NAMED = /^(mindcv|hf-hub):/;

/** A named weight source (`mindcv:` or `hf-hub:`), not a path. */
export function isNamedWeights(v: unknown): v is string {
  return typeof v === 'string' && NAMED.test(v);
}
