// The language of sweep specs (`*.ascend-sweep.yaml`, docs/sweeps.md): completion, hover and
// diagnostics from the sweep schema (runner/ascend_finetune/sweep.schema.json), with `space` keys
// completed and checked as run-spec field paths. The runner's `sweep` checks the values against the
// run spec's rules as well; this says early what the schema can tell.
import Ajv, { type ErrorObject } from 'ajv';
import {
  CompletionItemKind,
  DiagnosticSeverity,
  MarkupKind,
  type CompletionItem,
  type Diagnostic,
  type Hover,
} from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { SchemaNode } from '../core/spec/fields';
import { closeMatch, pyDumps } from '../core/spec/py';
import { sweepableFields, sweepFieldSchema, SWEEP_SCHEMA } from '../core/sweeps/schema';
import { fieldMarkdown } from './fieldDocs';
import * as l10n from './l10n';
import { cursorContext } from './position';
import { nodeAt, type Span, type SpecDocument } from './specDocument';

export const SWEEP_SOURCE = 'ascend-sweep';

// verbose: each error carries its rule (parentSchema, with the field's x-expect/x-fix) and the value.
const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true, verbose: true });
const validate = ajv.compile(SWEEP_SCHEMA);

const range = (td: TextDocument, s: Span) => ({ start: td.positionAt(s.start), end: td.positionAt(s.end) });

/** The dotted node path of an ajv instancePath (`/space/train.lr/low` -> `space.train.lr.low`). */
const dotted = (instancePath: string) =>
  instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');

function problem(e: ErrorObject): { path: string; message: string } {
  const t = l10n.t;
  let path = dotted(e.instancePath);
  if (e.keyword === 'additionalProperties') {
    const extra = String((e.params as { additionalProperty: string }).additionalProperty);
    path = path ? `${path}.${extra}` : extra;
    return { path, message: t('{0}: unknown field "{1}"', path, extra) };
  }
  // The field's own x-expect/x-fix, worded as a run spec's field problem is (problemWords.ts):
  // `field: must be <x-expect>, got <value> (<x-fix>)`; without them, ajv's words (and a section's fix).
  const rule = e.parentSchema as SchemaNode | undefined;
  const expect = rule?.['x-expect'];
  const fix = rule?.['x-fix'];
  const said = expect
    ? t('must be {0}, got {1}', l10n.schemaText(expect), pyDumps(e.data))
    : ((l10n.localised() ? ajvWords(e) : undefined) ?? e.message ?? t('is not allowed'));
  const head = t('{0}: {1}', path || t('the sweep spec'), said);
  return { path, message: fix ? t('{0} ({1})', head, l10n.schemaText(fix)) : head };
}

/**
 * ajv's English message for the keywords the sweep schema uses, in the client's language; English
 * clients get ajv's own words (these keys are those words), and another keyword stays ajv's English.
 */
function ajvWords(e: ErrorObject): string | undefined {
  const t = l10n.t;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return t("must have required property '{0}'", String(p.missingProperty));
    case 'type':
      return t('must be {0}', String(p.type));
    case 'enum':
      return t('must be equal to one of the allowed values');
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return t('must be {0} {1}', String(p.comparison), String(p.limit));
    case 'minItems':
      return t('must NOT have fewer than {0} items', String(p.limit));
    case 'minLength':
      return t('must NOT have fewer than {0} characters', String(p.limit));
    case 'minProperties':
      return t('must NOT have fewer than {0} properties', String(p.limit));
    case 'pattern':
      return t('must match pattern "{0}"', String(p.pattern));
    case 'uniqueItems':
      return t('must NOT have duplicate items (items ## {0} and {1} are identical)', String(p.j), String(p.i));
    default:
      return undefined;
  }
}

export function diagnoseSweep(doc: SpecDocument, td: TextDocument): Diagnostic[] {
  const out: Diagnostic[] = doc.errors.map((e) => ({
    range: range(td, e.span),
    message: e.message,
    severity: DiagnosticSeverity.Error,
    source: SWEEP_SOURCE,
  }));
  if (doc.value === undefined || doc.errors.length) return out;
  const at = (path: string, key = false) => {
    const n = doc.nodes.get(path);
    return n ? range(td, (key && n.keySpan) || n.valueSpan) : range(td, { start: 0, end: 0 });
  };
  if (!validate(doc.value)) {
    const seen = new Set<string>();
    for (const e of validate.errors ?? []) {
      if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
      const p = problem(e);
      if (seen.has(p.message)) continue;
      seen.add(p.message);
      out.push({
        range: at(p.path, e.keyword === 'additionalProperties'),
        message: p.message,
        severity: DiagnosticSeverity.Error,
        source: SWEEP_SOURCE,
      });
    }
  }
  // Space keys are run-spec fields by their dotted path.
  const space = (doc.value as { space?: unknown }).space;
  if (typeof space === 'object' && space !== null && !Array.isArray(space)) {
    const fields = sweepableFields().map((f) => f.path);
    for (const key of Object.keys(space)) {
      if (fields.includes(key)) continue;
      const near = closeMatch(key, fields, 0.6);
      out.push({
        range: at(`space.${key}`, true),
        message: near
          ? l10n.t('{0}: not a run-spec field a sweep can set; did you mean "{1}"?', `space.${key}`, near)
          : l10n.t(
              '{0}: not a run-spec field a sweep can set (fields are dotted paths such as "train.lr")',
              `space.${key}`,
            ),
        severity: DiagnosticSeverity.Error,
        source: SWEEP_SOURCE,
      });
    }
  }
  return out;
}

export function completeSweep(doc: SpecDocument, td: TextDocument, offset: number): CompletionItem[] {
  const ctx = cursorContext(doc, offset);
  if (!ctx) return [];
  const r = range(td, ctx.replace);
  const json = doc.kind === 'json';
  if (ctx.mode === 'key' && ctx.path.length === 1 && ctx.path[0] === 'space') {
    return sweepableFields().map((f, i) => ({
      label: f.path,
      kind: CompletionItemKind.Property,
      documentation: { kind: MarkupKind.Markdown, value: fieldMarkdown(f.path.split('.')) ?? '' },
      sortText: String(i).padStart(4, '0'),
      textEdit: {
        range: r,
        newText: json
          ? `"${f.path}": {$0}`
          : f.rule.enum || f.rule.type === 'string' || f.rule.type === 'boolean'
            ? `${f.path}: {choices: [$0]}`
            : `${f.path}: {low: $1, high: $2}`,
      },
      insertTextFormat: 2,
    }));
  }
  const rule = sweepFieldSchema(ctx.path);
  if (!rule) return [];
  if (ctx.mode === 'key')
    return Object.entries(rule.properties ?? {}).map(([k, sub]) => ({
      label: k,
      kind: CompletionItemKind.Property,
      documentation: { kind: MarkupKind.Markdown, value: l10n.schemaText(sub.description ?? '') },
      textEdit: { range: r, newText: json ? `"${k}": ` : `${k}: ` },
    }));
  const values = rule.enum ?? (rule.default !== undefined ? [rule.default] : []);
  return values.map((v, i) => ({
    label: typeof v === 'string' ? v : JSON.stringify(v),
    kind: CompletionItemKind.EnumMember,
    documentation: l10n.schemaText(rule['x-enumDescriptions']?.[i]),
    textEdit: {
      range: r,
      newText: ctx.quoted || json ? JSON.stringify(v) : typeof v === 'string' ? v : JSON.stringify(v),
    },
  }));
}

export function hoverSweep(doc: SpecDocument, td: TextDocument, offset: number): Hover | undefined {
  const at = nodeAt(doc, offset);
  if (!at?.node.path) return undefined;
  const segs = at.node.path.split('.');
  let value: string | undefined;
  if (segs[0] === 'space' && segs.length > 1) {
    // `space.train.lr[.low]`: the run-spec field the key names.
    const field = sweepableFields().find(
      (f) => at.node.path === `space.${f.path}` || at.node.path.startsWith(`space.${f.path}.`),
    );
    value = field ? fieldMarkdown(field.path.split('.')) : undefined;
  }
  if (!value) {
    const rule = sweepFieldSchema(segs);
    value = rule ? `**\`${at.node.path}\`**\n\n${l10n.schemaText(rule.description ?? '')}` : undefined;
  }
  return value
    ? { contents: { kind: MarkupKind.Markdown, value }, range: range(td, at.node.keySpan ?? at.node.valueSpan) }
    : undefined;
}
