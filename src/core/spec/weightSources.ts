// `model.pretrained` values that name a source instead of a file (`mindcv:resnet50`,
// `hf-hub:timm/resnet50.a1_in1k`): the runner fetches them where the run executes
// (runner/ascend_finetune/models/catalog.py), so they are neither joined to the spec's folder nor
// checked as files here.

import { applyEdits, modify, parse, type ParseError } from 'jsonc-parser';
import { isMap, isScalar, parseDocument } from 'yaml';
import { formatBytes } from '../checkpoints/manifest';
import type { Translate } from '../l10n';

const NAMED = /^(mindcv|hf-hub):/;

interface CatalogFacts {
  family: string;
  license?: string;
  params?: number;
  size_bytes?: number;
  top1?: number;
  top1_source?: string;
}

interface CatalogFile {
  mindcv: Record<string, CatalogFacts & { path: string; backbone: string | null }>;
  /** timm's hub repositories (`timm/resnet50.a1_in1k`), each checked against timm's own facts. */
  hf_hub: Record<string, CatalogFacts & { backbone: string; num_classes: number; input_size: number }>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const CATALOG: CatalogFile = require('../../../runner/ascend_finetune/weights_catalog.json');
const HUB_FILE = 'model.safetensors';

export interface NamedWeights {
  /** The model.pretrained value, e.g. `mindcv:resnet50` or `hf-hub:timm/resnet50.a1_in1k`. */
  value: string;
  /** Who published the weights: mindcv's download site, or timm's repositories on the Hugging Face hub. */
  source: 'mindcv' | 'timm';
  /** The runner backbone it loads into. */
  backbone: string;
  file: string;
  /** The catalog's model family (`resnet`, `mobilenetv3`), which the wizard groups the whole catalog by. */
  family?: string;
  /** From the catalog, when recorded: the licence, trainable parameters and float32 bytes of its tensors. */
  license?: string;
  params?: number;
  sizeBytes?: number;
  /** ImageNet-1K top-1 (%) from mindcv's model card for this very file (timm: its results table), and which. */
  top1?: number;
  top1Source?: string;
  /** timm only: the classes of the head it was published with (0: none, features only) and its input size. */
  numClasses?: number;
  inputSize?: number;
}

/** The facts both sections record alike, as NamedWeights spells them. */
function facts(
  e: CatalogFacts,
): Pick<NamedWeights, 'family' | 'license' | 'params' | 'sizeBytes' | 'top1' | 'top1Source'> {
  return {
    family: e.family,
    license: e.license,
    params: e.params,
    sizeBytes: e.size_bytes,
    top1: e.top1,
    top1Source: e.top1_source,
  };
}

/** The `mindcv:` sources the runner loads (those of its catalog with a backbone), for completion. */
export function mindcvSources(): NamedWeights[] {
  return Object.entries(CATALOG.mindcv).flatMap(([name, e]) =>
    e.backbone === null
      ? []
      : [
          {
            value: `mindcv:${name}`,
            source: 'mindcv' as const,
            backbone: e.backbone,
            file: e.path,
            ...facts(e),
          },
        ],
  );
}

/**
 * The catalog's timm repositories on the Hugging Face hub, in its order: per backbone, licences that
 * allow commercial use first, each group by ImageNet top-1.
 */
export function hubSources(): NamedWeights[] {
  return Object.entries(CATALOG.hf_hub).map(([repo, e]) => ({
    value: `hf-hub:${repo}`,
    source: 'timm' as const,
    backbone: e.backbone,
    file: HUB_FILE,
    ...facts(e),
    numClasses: e.num_classes,
    inputSize: e.input_size,
  }));
}

/** Everything the wizard and completion offer: mindcv's files, then timm's hub repositories. */
export function catalogSources(): NamedWeights[] {
  return [...mindcvSources(), ...hubSources()];
}

/**
 * `mindcv · Apache-2.0 · 11.7 M params · 46.8 MB · ImageNet top-1 70.21%`: a catalog entry's facts,
 * those recorded (the parameter count only when `params` is asked for). Top-1 is printed with its
 * source's own decimals (mindcv's cards two, timm's table three). A timm entry also says a head other
 * than ImageNet-1K's and an input size other than 224 px.
 */
export function weightsFacts(s: NamedWeights, t: Translate, opts: { params?: boolean } = {}): string {
  const head =
    s.numClasses === undefined || s.numClasses === 1000
      ? undefined
      : s.numClasses === 0
        ? t('published without a classifier')
        : t('{0}-class head', s.numClasses);
  return [
    s.source === 'timm' ? t('timm (Hugging Face hub)') : 'mindcv',
    s.license,
    opts.params && s.params !== undefined ? t('{0} M params', (s.params / 1e6).toFixed(1)) : undefined,
    s.sizeBytes === undefined ? undefined : formatBytes(s.sizeBytes),
    s.inputSize !== undefined && s.inputSize !== 224 ? t('{0} px', s.inputSize) : undefined,
    head,
    s.top1 === undefined ? undefined : t('ImageNet top-1 {0}%', s.top1.toFixed(s.source === 'timm' ? 3 : 2)),
  ]
    .filter(Boolean)
    .join(' · ');
}

// timm's architecture (before the tag's dot) -> the backbone, from the catalog's repositories: every
// architecture the runner maps has at least one (test/runner/test_weights_catalog_facts.py).
const TIMM_ARCH = new Map(
  Object.entries(CATALOG.hf_hub).map(([repo, e]) => [repo.split('/')[1].split('.')[0], e.backbone]),
);

/**
 * The runner backbone a catalog source loads into; for any `hf-hub:<org>/<arch>.<tag>`, the one its
 * timm architecture maps to, as the runner's catalog.parse reads it (the repository's name before the
 * dot, whoever publishes it). Undefined: a name neither knows.
 */
export function backboneOfNamed(value: string): string | undefined {
  const text = value.split('#')[0];
  const own = mindcvSources().find((s) => s.value === text)?.backbone;
  if (own) return own;
  const m = /^hf-hub:[A-Za-z0-9][\w.-]*\/([A-Za-z0-9][\w-]*)(?:\.[\w.-]*)?(?::.*)?$/.exec(text);
  return m ? TIMM_ARCH.get(m[1]) : undefined;
}

/**
 * Where a named source sits under a weights cache's `weights/` folder, as the runner's catalog.py
 * `cache_relpath` puts it (`mindcv/resnet50-e0733ab8.ckpt`, `hf-hub/<org>/<repo>/main/<file>`);
 * undefined for a name the catalog does not know.
 */
export function namedCacheRel(value: string): string | undefined {
  const text = value.split('#')[0];
  if (text.startsWith('mindcv:')) {
    const e = CATALOG.mindcv[text.slice('mindcv:'.length)];
    return e ? `mindcv/${e.path.split('/').pop()}` : undefined;
  }
  const m = /^hf-hub:([A-Za-z0-9][\w.-]*)\/([A-Za-z0-9][\w.-]*)(?::(.+))?$/.exec(text);
  if (!m || (m[3] ?? '').split('/').includes('..')) return undefined;
  return `hf-hub/${m[1]}/${m[2]}/main/${m[3] ?? 'model.safetensors'}`;
}

/**
 * The named source whose place under a weights cache's `weights/` folder `rel` is (namedCacheRel's
 * inverse): `mindcv/<file>` is the `mindcv:<model>` whose catalog file has that name,
 * `hf-hub/<org>/<repo>/main/<file>` is `hf-hub:<org>/<repo>` (with `:<file>` when it is not
 * model.safetensors). Undefined for any other place, a mindcv file the catalog does not know, and a
 * hub repository's config.json (its preprocessing, not weights). A file copied to that place on a
 * target is found there by this name, with the source's own preprocessing, without a request.
 */
export function cacheRelSource(rel: string): string | undefined {
  const parts = rel.split('/');
  if (parts[0] === 'mindcv') {
    if (parts.length !== 2) return undefined;
    const hit = Object.entries(CATALOG.mindcv).find(([, e]) => e.path.split('/').pop() === parts[1]);
    return hit ? `mindcv:${hit[0]}` : undefined;
  }
  // The names the runner's catalog.parse accepts (_HF_PART, _HF_FILE), at the revision it fetches.
  const m = /^hf-hub\/([A-Za-z0-9][\w.-]*)\/([A-Za-z0-9][\w.-]*)\/main\/([\w.-][\w./-]*)$/.exec(rel);
  if (!m || m[3].split('/').some((p) => p === '' || p === '.' || p === '..') || m[3] === 'config.json')
    return undefined;
  return `hf-hub:${m[1]}/${m[2]}${m[3] === HUB_FILE ? '' : `:${m[3]}`}`;
}

/** A named weight source (`mindcv:` or `hf-hub:`), not a path. */
export function isNamedWeights(v: unknown): v is string {
  return typeof v === 'string' && NAMED.test(v);
}

/**
 * The spec text with `model.pretrained` set to `value`, keeping comments and layout: a JSON spec (it
 * starts with `{`, after any comments) through jsonc-parser's edits, a YAML one through the `yaml`
 * package's document. Undefined for text that is not one mapping (the caller then shows the value to
 * paste).
 */
export function withPretrained(text: string, value: string): string | undefined {
  const body = text.replace(/^(\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*/, '');
  return body.startsWith('{') ? jsonWithPretrained(text, value) : yamlWithPretrained(text, value);
}

function jsonWithPretrained(text: string, value: string): string | undefined {
  const errors: ParseError[] = [];
  const tree: unknown = parse(text, errors, { allowTrailingComma: true });
  if (errors.length || typeof tree !== 'object' || tree === null || Array.isArray(tree)) return undefined;
  const edits = modify(text, ['model', 'pretrained'], value, { formattingOptions: { insertSpaces: true, tabSize: 2 } });
  return applyEdits(text, edits);
}

function yamlWithPretrained(text: string, value: string): string | undefined {
  const doc = parseDocument(text, { schema: 'core' });
  if (doc.errors.length || !isMap(doc.contents)) return undefined;
  const model = doc.get('model', true);
  if (isMap(model)) model.set('pretrained', value);
  else if (model === undefined || (isScalar(model) && model.value === null))
    doc.set('model', doc.createNode({ pretrained: value })); // no `model`, or an empty `model:`
  else return undefined; // `model: 3`: not ours to fix
  return doc.toString();
}
