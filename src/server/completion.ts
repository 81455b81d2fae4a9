// Completion of keys (the section's fields not yet written) and values (enums with what each
// does, booleans, the default, and folders/checkpoint files for the path fields), with docs.
import { readdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CompletionItemKind, InsertTextFormat, MarkupKind, type CompletionItem } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { enumValues, fieldSchema, propertiesOf, resolveSpecPath } from '../core/spec/schema';
import { formatBytes } from '../core/checkpoints/manifest';
import { catalogSources, namedCacheRel, weightsFacts, type NamedWeights } from '../core/spec/weightSources';
import { localCacheState } from '../core/targets/weightsCache';
import { localCacheWeights } from '../core/targets/weightsCopy';
import { yamlScalar } from '../core/spec/writer';
import { cacheNote } from '../core/wizard/weightsItems';
import { LOCAL_SPEC_TARGET } from '../shared/specProtocol';
import { fieldMarkdown, ruleAt } from './fieldDocs';
import * as l10n from './l10n';
import { backboneStages, isFreezePath, stagesNote } from './freezeStages';
import { cursorContext, type CursorContext } from './position';
import type { SpecDocument } from './specDocument';
import type { WeightsView } from './targetWeights';

/** A model.pretrained item of the weights catalog (its cache state comes from the spec's target). */
export function isCatalogWeightsItem(item: CompletionItem): boolean {
  return (item.data as { catalogWeights?: unknown } | undefined)?.catalogWeights === true;
}

const CHECKPOINT_FILE = /\.(ckpt|safetensors)$/i;
const MAX_LISTED = 200;

/**
 * `weights`: what is known about the weights cache of the spec's target (default: this machine's,
 * read here), for the cache state of model.pretrained's catalog items.
 */
export function complete(
  doc: SpecDocument,
  td: TextDocument,
  offset: number,
  baseDir: string,
  weights: WeightsView = { target: LOCAL_SPEC_TARGET },
): CompletionItem[] {
  const ctx = cursorContext(doc, offset);
  if (!ctx) return [];
  if (ctx.mode !== 'key') return valueItems(td, ctx, baseDir, doc, weights);
  // Whole-spec snippets only where a whole spec fits: a top-level key of a YAML file with no field yet.
  const snippets =
    doc.kind !== 'json' && ctx.path.length === 0 && [...doc.nodes.keys()].every((k) => k === '')
      ? snippetItems(td, ctx)
      : [];
  return [...keyItems(doc, td, ctx), ...snippets];
}

interface Snippet {
  prefix: string | string[];
  description?: string;
  body: string | string[];
}

let snippetCache: Record<string, Snippet> | undefined;

/**
 * The spec snippets (snippets/ascend-run.json), read once. They are offered by this server, not
 * contributed to VS Code's snippet list, which would offer them on values too and list a snippet
 * once per prefix.
 */
export function specSnippets(): Record<string, Snippet> {
  if (snippetCache) return snippetCache;
  // dist/server.js in the extension, src/server/completion.ts in the tests
  for (const dir of [path.join(__dirname, '..'), path.join(__dirname, '..', '..')]) {
    try {
      return (snippetCache = JSON.parse(readFileSync(path.join(dir, 'snippets', 'ascend-run.json'), 'utf8')));
    } catch {
      // not here
    }
  }
  return (snippetCache = {});
}

function snippetItems(td: TextDocument, ctx: CursorContext): CompletionItem[] {
  const range = { start: td.positionAt(ctx.replace.start), end: td.positionAt(ctx.replace.end) };
  return Object.entries(specSnippets()).map(([name, s], i) => {
    const prefixes = ([] as string[]).concat(s.prefix);
    return {
      label: name,
      kind: CompletionItemKind.Snippet,
      detail: l10n.t('run spec snippet'),
      documentation: s.description ? { kind: MarkupKind.Markdown, value: s.description } : undefined,
      filterText: [...prefixes, name].join(' '),
      sortText: `z${String(i).padStart(3, '0')}`,
      insertTextFormat: InsertTextFormat.Snippet,
      textEdit: { range, newText: ([] as string[]).concat(s.body).join('\n') },
    } satisfies CompletionItem;
  });
}

function keyItems(doc: SpecDocument, td: TextDocument, ctx: CursorContext): CompletionItem[] {
  const props = propertiesOf(fieldSchema(ctx.path));
  if (!props) return [];
  const prefix = ctx.path.join('.');
  const range = { start: td.positionAt(ctx.replace.start), end: td.positionAt(ctx.replace.end) };
  return Object.entries(props)
    .filter(([k]) => !doc.nodes.has(prefix ? `${prefix}.${k}` : k))
    .map(([k, rule], i) => {
      const section = rule.type === 'object';
      const pad = ' '.repeat(ctx.indent + 2);
      const newText =
        doc.kind === 'json' ? `"${k}": ${section ? '{$0}' : '$0'}` : section ? `${k}:\n${pad}$0` : `${k}: $0`;
      return {
        label: k,
        kind: section ? CompletionItemKind.Module : CompletionItemKind.Property,
        detail: section
          ? l10n.t('section')
          : rule.default === undefined
            ? l10n.t('required')
            : l10n.t('default {0}', JSON.stringify(rule.default)),
        documentation: { kind: MarkupKind.Markdown, value: fieldMarkdown([...ctx.path, k]) ?? '' },
        sortText: String(i).padStart(3, '0'),
        insertTextFormat: InsertTextFormat.Snippet,
        textEdit: { range, newText },
      } satisfies CompletionItem;
    });
}

function valueItems(
  td: TextDocument,
  ctx: CursorContext,
  baseDir: string,
  doc: SpecDocument,
  weights: WeightsView,
): CompletionItem[] {
  const rule = ruleAt(ctx.path);
  if (!rule || rule.type === 'object') return [];
  const range = { start: td.positionAt(ctx.replace.start), end: td.positionAt(ctx.replace.end) };
  const types = rule.type === undefined ? [] : Array.isArray(rule.type) ? rule.type : [rule.type];
  const text = (v: unknown) =>
    typeof v === 'string' ? (ctx.quoted ? JSON.stringify(v) : yamlScalar(v)) : JSON.stringify(v);
  const items: CompletionItem[] = [];
  const add = (value: unknown, kind: CompletionItemKind, doc?: string, detail?: string) => {
    const isDefault = JSON.stringify(value) === JSON.stringify(rule.default);
    items.push({
      label: typeof value === 'string' ? value : JSON.stringify(value),
      kind,
      detail: detail ?? (isDefault ? l10n.t('default') : undefined),
      preselect: isDefault || undefined,
      documentation: doc ? { kind: MarkupKind.Markdown, value: doc } : undefined,
      sortText: `${isDefault ? '0' : '1'}${String(items.length).padStart(3, '0')}`,
      textEdit: { range, newText: text(value) },
    });
  };
  // A freeze field offers only the stages of the spec's backbone (the runner refuses the others).
  const stages = isFreezePath(ctx.path) ? backboneStages(doc) : undefined;
  const values = enumValues(rule);
  if (values)
    values.forEach((v, i) => {
      if (!stages || stages.values.includes(v))
        add(
          v,
          CompletionItemKind.EnumMember,
          [l10n.schemaText(rule['x-enumDescriptions']?.[i]), stages && stagesNote(stages)].filter(Boolean).join('\n\n'),
        );
    });
  else if (types.includes('boolean')) [true, false].forEach((v) => add(v, CompletionItemKind.Value));
  else if (rule['x-path']) {
    for (const p of pathItems(ctx.partial, baseDir, rule['x-path']))
      add(
        p.value,
        p.dir ? CompletionItemKind.Folder : CompletionItemKind.File,
        undefined,
        p.dir ? l10n.t('folder') : l10n.t('checkpoint'),
      );
    // Named sources the runner downloads: mindcv's checkpoints and timm's hub repositories for the
    // spec's backbone.
    if (ctx.path.join('.') === 'model.pretrained') {
      const backbone = doc.nodes.get('model.backbone')?.value ?? fieldSchema(['model', 'backbone'])?.default;
      for (const s of catalogSources().filter((m) => m.backbone === backbone && m.value.startsWith(ctx.partial))) {
        const cache = weights.target.kind === 'local' ? localCache(s) : targetCache(s, weights);
        add(s.value, CompletionItemKind.Reference, `${cache.doc}\n\n${weightsDoc(s)}`, weightsDetail(s));
        items[items.length - 1].labelDetails = { description: cache.short };
        items[items.length - 1].data = { catalogWeights: true };
      }
    }
  } else if (rule.default !== undefined && rule.default !== null)
    add(rule.default, CompletionItemKind.Value, fieldMarkdown(ctx.path));
  if (types.includes('null')) add(null, CompletionItemKind.Constant, l10n.t('null: see the field for what that means'));
  return items;
}

/** Folders (and, for a checkpoint, `.ckpt`/`.safetensors` files) next to what was typed. */
function pathItems(partial: string, baseDir: string, kind: 'folder' | 'file'): { value: string; dir: boolean }[] {
  const typedDir = partial.includes('/') ? partial.slice(0, partial.lastIndexOf('/') + 1) : '';
  let entries;
  try {
    entries = readdirSync(resolveSpecPath(typedDir || '.', baseDir), { withFileTypes: true });
  } catch {
    return [];
  }
  const out: { value: string; dir: boolean }[] = [];
  for (const e of entries) {
    if (e.name.startsWith('.') || out.length >= MAX_LISTED) continue;
    let dir = e.isDirectory();
    if (e.isSymbolicLink()) {
      try {
        dir = readdirSync(path.join(resolveSpecPath(typedDir || '.', baseDir), e.name)) !== undefined;
      } catch {
        dir = false;
      }
    }
    if (dir) out.push({ value: `${typedDir}${e.name}${kind === 'file' ? '/' : ''}`, dir: true });
    else if (kind === 'file' && CHECKPOINT_FILE.test(e.name)) out.push({ value: `${typedDir}${e.name}`, dir: false });
  }
  return out.sort(
    (a, b) =>
      Number(b.dir && kind === 'file' ? 0 : 1) - Number(a.dir && kind === 'file' ? 0 : 1) ||
      a.value.localeCompare(b.value),
  );
}

/** Whether this machine's weights cache holds the file (the spec runs here). Read like the runner's weights-status. */
function localCache(s: NamedWeights): { short: string; doc: string } {
  const rel = namedCacheRel(s.value);
  const st = rel ? localCacheState(localCacheWeights(process.env, os.homedir()), rel) : undefined;
  if (st?.state === 'cached')
    return {
      short: l10n.t('cached on this machine'),
      doc: l10n.t("In this machine's weights cache: `{0}` ({1}).", st.path, formatBytes(st.bytes)),
    };
  return {
    short: l10n.t('not cached on this machine'),
    doc: l10n.t("Not in this machine's weights cache: the run downloads it where it executes."),
  };
}

/** Whether the spec's SSH target holds the file, from its own `weights-status`; or why that is not known. */
function targetCache(s: NamedWeights, weights: WeightsView): { short: string; doc: string } {
  const label = weights.target.label;
  const entry = weights.entries?.get(s.value);
  if (entry) {
    const note = cacheNote(s, { ...entry }, label, l10n.t);
    return {
      short: note.text,
      doc: l10n.t('On {0}, where this spec runs: {1} (`{2}`).', label, note.text, entry.path),
    };
  }
  const u = weights.unknown;
  const why =
    u?.why === 'unconfigured'
      ? l10n.t('"{0}" is not a configured target', weights.target.id)
      : u?.why === 'failed'
        ? l10n.t('{0} did not answer ({1})', label, u.message ?? '')
        : weights.entries
          ? l10n.t('{0} did not list it', label)
          : l10n.t('{0} has not answered yet; complete again in a moment', label);
  return {
    short: l10n.t('not known on {0}', label),
    doc: l10n.t(
      "Whether {0} (the target this spec runs on) has it in its weights cache is not known: {1}. This machine's cache says nothing about it.",
      label,
      why,
    ),
  };
}

/** `mindcv · Apache-2.0 · 11.7 M params · 46.8 MB · ImageNet top-1 70.21%`: the facts recorded. */
function weightsDetail(s: NamedWeights): string {
  return weightsFacts(s, l10n.t, { params: true });
}

/** Where the weights come from, their licence, size and ImageNet top-1, and how they reach the target. */
function weightsDoc(s: NamedWeights): string {
  const timm = s.source === 'timm';
  const lines = [
    timm
      ? l10n.t(
          "timm's {0} weights on the Hugging Face hub (`{1}`), downloaded where the run executes into its cache (HF_ENDPOINT names a mirror); their own config.json sets the preprocessing.",
          s.backbone,
          s.value.slice('hf-hub:'.length),
        )
      : l10n.t(
          "mindcv's published {0} weights (`{1}`), downloaded where the run executes into its cache.",
          s.backbone,
          s.file,
        ),
  ];
  if (s.license)
    lines.push(
      timm
        ? l10n.t("Licence: {0} (timm's pretrained config)", s.license)
        : l10n.t('Licence: {0} (mindcv 0.3.0)', s.license),
    );
  if (s.params !== undefined && s.sizeBytes !== undefined)
    lines.push(
      l10n.t(
        'Size: {0} parameters, {1} of float32 tensors',
        s.params.toLocaleString('en-US'),
        formatBytes(s.sizeBytes),
      ),
    );
  if (s.top1 !== undefined)
    lines.push(
      timm
        ? l10n.t('ImageNet-1K top-1: {0}% (timm: {1})', s.top1.toFixed(3), s.top1Source ?? 'timm')
        : l10n.t('ImageNet-1K top-1: {0}% (mindcv model card: {1})', s.top1.toFixed(2), s.top1Source ?? 'mindcv'),
    );
  else if (timm) lines.push(l10n.t('No ImageNet-1K top-1: published without an ImageNet-1K classifier.'));
  lines.push(l10n.t('For a target without internet, use "Ascend: Copy Weights to Target…".'));
  return lines.join('\n\n');
}
