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
import { closeMatch } from '../core/spec/py';
import { sweepableFields, sweepFieldSchema, SWEEP_SCHEMA } from '../core/sweeps/schema';
import { fieldMarkdown } from './fieldDocs';
import * as l10n from './l10n';
import { cursorContext } from './position';
import { nodeAt, type Span, type SpecDocument } from './specDocument';

export const SWEEP_SOURCE = 'ascend-sweep';

const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
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
  let path = dotted(e.instancePath);
  if (e.keyword === 'additionalProperties') {
    const extra = String((e.params as { additionalProperty: string }).additionalProperty);
    path = path ? `${path}.${extra}` : extra;
    return { path, message: `${path}: unknown field "${extra}"` };
  }
  const rule = e.parentSchema as { 'x-expect'?: string; 'x-fix'?: string } | undefined;
  const expect = rule?.['x-expect'] ? `must be ${rule['x-expect']}` : (e.message ?? 'is not allowed');
  return { path, message: `${path || 'the sweep spec'}: ${expect}${rule?.['x-fix'] ? `; ${rule['x-fix']}` : ''}` };
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
        message: `space.${key}: not a run-spec field a sweep can set${near ? `; did you mean "${near}"?` : ' (fields are dotted paths such as "train.lr")'}`,
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
