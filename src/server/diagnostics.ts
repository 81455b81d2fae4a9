// Diagnostics for a run-spec file: syntax errors, the schema's problems (the runner's own words,
// placed on the key or value they are about), and checks that need this machine: class folders,
// num_classes against them, files that must exist (on this machine, or on an SSH target from the
// runner's `probe`), and advice about AMP and devices.
import * as l10n from './l10n';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  checkSpec,
  enumValues,
  fieldSchema,
  pathFields,
  resolveSpecPath,
  specDefault,
  type SpecProblem,
} from '../core/spec/schema';
import { closeMatch } from '../core/spec/py';
import { joined } from '../shared/l10n';
import type { PathFact } from '../shared/specProtocol';
import { SOURCE, type FixData } from './fixData';
import { stageDiagnostics } from './freezeStages';
import { problemLine } from './schemaWords';
import { LIMITS, type FieldNode, type Span, type SpecDocument } from './specDocument';

export { SOURCE, type FixData };

export interface DiagnoseOptions {
  /** The spec file's folder: relative paths are read from there, as the runner does. */
  baseDir?: string;
  /** Check paths and class folders on this machine (off for specs meant for another box). */
  local?: boolean;
  /** For a spec meant for an SSH target: what its paths are there. */
  remote?: RemoteFacts;
}

/** What the runner's `probe` found on a target, per spec field (`data.train`, ...). */
export interface RemoteFacts {
  /** The target's label, for messages. */
  target: string;
  /** Absent while the answer is on its way. */
  facts?: Partial<Record<string, PathFact>>;
  /** Why there are no facts (the target is unreachable, not configured, ...). */
  unavailable?: string;
}

export function diagnose(doc: SpecDocument, td: TextDocument, opts: DiagnoseOptions = {}): Diagnostic[] {
  const range = (s: Span) => ({ start: td.positionAt(s.start), end: td.positionAt(Math.max(s.end, s.start)) });
  const out: Diagnostic[] = doc.errors.map((e) => ({
    range: range(e.span),
    severity: DiagnosticSeverity.Error,
    source: SOURCE,
    message: e.message,
  }));
  if (doc.value === undefined || doc.errors.length) return out;
  const problems = checkSpec(doc.value, {
    floatPaths: doc.floatPaths,
    baseDir: opts.baseDir,
    checkFiles: opts.local ?? false,
  });
  for (const p of problems) out.push(toDiagnostic(doc, p, range));
  const bad = new Set(problems.map((p) => p.path));
  // The schema takes every backbone's stages; the spec's backbone has only its own (the runner checks it too).
  out.push(...stageDiagnostics(doc, range, bad));
  if (opts.local) out.push(...localChecks(doc, opts.baseDir ?? '.', bad, range));
  else if (opts.remote) out.push(...remoteChecks(doc, opts.remote, bad, range));
  // Advice that only makes sense for a spec that validates waits for its errors (a missing path is a warning, not one).
  out.push(
    ...advice(
      doc,
      range,
      problems.every((p) => / not found: /.test(p.message)),
    ),
  );
  // A file of thousands of wrong keys is not a spec: the first ones say so.
  if (out.length > LIMITS.maxDiagnostics) {
    const more = out.length - LIMITS.maxDiagnostics;
    out.length = LIMITS.maxDiagnostics;
    out.push({
      range: range({ start: 0, end: 0 }),
      severity: DiagnosticSeverity.Error,
      source: SOURCE,
      message: l10n.t('and {0} more problems: is this a run spec?', more),
    });
  }
  return out;
}

/** Where a problem goes: an unknown field's key, a bad value, or the section a required field is missing from. */
function spanOf(doc: SpecDocument, p: SpecProblem): Span {
  const node = doc.nodes.get(p.path);
  if (node)
    return p.words?.kind === 'unknown_field' || p.words?.kind === 'required'
      ? (node.keySpan ?? node.valueSpan)
      : node.valueSpan;
  const segs = p.path.split('.');
  for (let i = segs.length - 1; i > 0; i--) {
    const parent = doc.nodes.get(segs.slice(0, i).join('.'));
    if (parent) return parent.keySpan ?? parent.valueSpan;
  }
  // The whole spec: its first line.
  const firstLine = doc.text.indexOf('\n');
  return { start: 0, end: firstLine < 0 ? doc.text.length : firstLine };
}

function toDiagnostic(doc: SpecDocument, p: SpecProblem, range: (s: Span) => Diagnostic['range']): Diagnostic {
  const d: Diagnostic = {
    range: range(spanOf(doc, p)),
    severity: / not found: /.test(p.message) ? DiagnosticSeverity.Warning : DiagnosticSeverity.Error,
    source: SOURCE,
    code: p.path || undefined,
    message: problemLine(p),
  };
  const fix = fixFor(doc, p);
  if (fix) d.data = fix;
  return d;
}

/** The quick fix a problem allows: a close key name, a close enum value, a bound or the default. */
function fixFor(doc: SpecDocument, p: SpecProblem): FixData | undefined {
  const segs = p.path.split('.');
  if (p.words?.kind === 'unknown_field') {
    const to = p.words.suggestion;
    return to !== undefined ? { kind: 'renameKey', path: p.path, to } : undefined;
  }
  const rule = fieldSchema(segs);
  const node = doc.nodes.get(p.path);
  if (!rule || !node) return undefined;
  const values: { label: string; value: unknown }[] = [];
  const names = enumValues(rule);
  if (names && p.message.startsWith('unknown value')) {
    const hint = closeMatch(String(node.value), names, 0.5);
    if (hint !== undefined) values.push({ label: l10n.t('Change to "{0}"', hint), value: hint });
  }
  if (p.message.startsWith('must be >') && typeof node.value === 'number') {
    const lo = rule.minimum ?? rule.exclusiveMinimum;
    if (rule.maximum !== undefined && node.value > rule.maximum)
      values.push({ label: l10n.t('Set to the maximum, {0}', rule.maximum), value: rule.maximum });
    else if (rule.minimum !== undefined && node.value < rule.minimum)
      values.push({ label: l10n.t('Set to the minimum, {0}', rule.minimum), value: rule.minimum });
    else if (lo === undefined && rule.maximum !== undefined)
      values.push({ label: l10n.t('Set to the maximum, {0}', rule.maximum), value: rule.maximum });
  }
  const def = specDefault(p.path);
  if (
    (values.length || /^(must be|must not be null|unknown value)/.test(p.message)) &&
    def !== undefined &&
    def !== null
  ) {
    values.push({ label: l10n.t('Set to the default, {0}', JSON.stringify(def)), value: def });
  }
  return values.length ? { kind: 'setValue', path: p.path, values } : undefined;
}

function num(doc: SpecDocument, path: string): number | undefined {
  const v = doc.nodes.get(path)?.value;
  return typeof v === 'number' ? v : undefined;
}

function str(doc: SpecDocument, path: string, fallback: string): string {
  const v = doc.nodes.get(path)?.value;
  return typeof v === 'string' ? v : fallback;
}

function at(doc: SpecDocument, path: string, fallbackPath = ''): FieldNode | undefined {
  return doc.nodes.get(path) ?? doc.nodes.get(fallbackPath);
}

/** Class folders of `data.train` and num_classes against them, on this machine. */
function localChecks(
  doc: SpecDocument,
  baseDir: string,
  bad: Set<string>,
  range: (s: Span) => Diagnostic['range'],
): Diagnostic[] {
  const train = doc.nodes.get('data.train');
  if (!train || typeof train.value !== 'string' || train.value === '' || bad.has('data.train')) return [];
  const dir = resolveSpecPath(train.value, baseDir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  let classes: string[];
  try {
    classes = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
  return classChecks(doc, train, classes, classes.length, '', bad, range);
}

/**
 * The same checks for a spec meant for an SSH target, from what the runner's `probe` found there:
 * paths that are missing or of the wrong kind, then the class folders. No facts yet: nothing (they
 * are on their way); no facts to be had: one Information, not a problem per path.
 */
function remoteChecks(
  doc: SpecDocument,
  remote: RemoteFacts,
  bad: Set<string>,
  range: (s: Span) => Diagnostic['range'],
): Diagnostic[] {
  const on = l10n.t(' on {0}', remote.target);
  if (remote.unavailable !== undefined) {
    const node = doc.nodes.get('data.train') ?? doc.nodes.get('data');
    const firstLine = doc.text.indexOf('\n');
    return [
      {
        range: range(
          node ? (node.keySpan ?? node.valueSpan) : { start: 0, end: firstLine < 0 ? doc.text.length : firstLine },
        ),
        severity: DiagnosticSeverity.Information,
        source: SOURCE,
        code: 'target',
        message: l10n.t('paths not checked{0}: {1}', on, remote.unavailable),
      },
    ];
  }
  const out: Diagnostic[] = [];
  for (const { path: dotted, kind } of pathFields()) {
    const node = doc.nodes.get(dotted);
    const fact = remote.facts?.[dotted];
    if (!node || !fact || bad.has(dotted)) continue;
    const where = fact.resolved === fact.path ? fact.path : l10n.t('{0}, that is {1}', fact.path, fact.resolved);
    if (fact.kind === kind) {
      if (fact.kind === 'folder' && dotted === 'data.train')
        out.push(...classChecks(doc, node, fact.classes, fact.count, on, bad, range));
      continue;
    }
    const what =
      fact.kind === 'missing'
        ? l10n.t('does not exist')
        : fact.kind === 'other'
          ? l10n.t('is neither a file nor a folder')
          : l10n.t('is a {0}, not a {1},', fact.kind, kind);
    out.push({
      range: range(node.valueSpan),
      severity: DiagnosticSeverity.Warning,
      source: SOURCE,
      code: dotted,
      message: l10n.t('{0} {1}{2}: {3} (point {4} at an existing {5} there)', dotted, what, on, where, dotted, kind),
    });
  }
  return out;
}

/** At least two class folders, and num_classes (when set) equal to their number. `on`: where, for the message. */
function classChecks(
  doc: SpecDocument,
  train: FieldNode,
  classes: string[],
  count: number,
  on: string,
  bad: Set<string>,
  range: (s: Span) => Diagnostic['range'],
): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (count < 2) {
    out.push({
      range: range(train.valueSpan),
      severity: DiagnosticSeverity.Error,
      source: SOURCE,
      code: 'data.train',
      message:
        count === 1
          ? l10n.t(
              'data.train has 1 class folder{0} ({1}): an ImageFolder needs one subfolder per class, at least 2 (point data.train at the folder that holds the class folders)',
              on,
              classes[0] ?? '',
            )
          : l10n.t(
              'data.train has {0} class folders{1}: an ImageFolder needs one subfolder per class, at least 2 (point data.train at the folder that holds the class folders)',
              count,
              on,
            ),
    });
    return out;
  }
  const nc = doc.nodes.get('model.num_classes');
  if (nc && typeof nc.value === 'number' && !bad.has('model.num_classes') && nc.value !== count) {
    const shown = joined(count > 8 ? [...classes.slice(0, 8), '…'] : classes, l10n.t);
    out.push({
      range: range(nc.valueSpan),
      severity: DiagnosticSeverity.Error,
      source: SOURCE,
      code: 'model.num_classes',
      message: l10n.t(
        'model.num_classes is {0} but data.train has {1} class folders{2} ({3}); the run would fail (set it to {4}, or null to use the folders)',
        nc.value,
        count,
        on,
        shown,
        count,
      ),
      data: {
        kind: 'setValue',
        path: 'model.num_classes',
        values: [
          { label: l10n.t('Set to {0} (the class folders)', count), value: count },
          { label: l10n.t('Set to null (count the folders)'), value: null },
        ],
      } satisfies FixData,
    });
  }
  return out;
}

/** Settings that are valid but probably not what the author wants, each with why. */
function advice(doc: SpecDocument, range: (s: Span) => Diagnostic['range'], valid: boolean): Diagnostic[] {
  const out: Diagnostic[] = [];
  const level = str(doc, 'amp.level', String(specDefault('amp.level')));
  const scale = str(doc, 'amp.loss_scale', String(specDefault('amp.loss_scale')));
  const warn = (
    node: FieldNode | undefined,
    message: string,
    code: string,
    severity: DiagnosticSeverity = DiagnosticSeverity.Warning,
    data?: FixData,
  ) => {
    if (node)
      out.push({
        range: range(node.keySpan ?? node.valueSpan),
        severity,
        source: SOURCE,
        code,
        message,
        ...(data ? { data } : {}),
      });
  };
  // amp.level auto is MindSpore's own per-op casting (BatchNorm and the loss stay float32) on every
  // backend, so it gets neither the O3 warning nor a CPU note.
  if (scale === 'none' && level === 'O3') {
    warn(
      at(doc, 'amp.loss_scale', 'amp.level'),
      l10n.t(
        'amp.level O3 without loss scaling: O3 runs everything in float16, BatchNorm and the loss included, and float16 gradients smaller than about 6e-8 become 0, so small gradients are lost and training can stall (set amp.loss_scale to "dynamic", or use O2, which keeps BatchNorm and the loss in float32)',
      ),
      'amp.loss_scale',
      DiagnosticSeverity.Warning,
      {
        kind: 'setValue',
        path: 'amp.loss_scale',
        values: [{ label: l10n.t('Set amp.loss_scale to "dynamic"'), value: 'dynamic' }],
      },
    );
  }
  const freeze = str(doc, 'model.freeze', String(specDefault('model.freeze')));
  if (doc.nodes.get('train.cache_features')?.value === true && freeze !== 'backbone') {
    // the runner refuses it at start (bad_input on train.cache_features): say so while editing
    warn(
      at(doc, 'train.cache_features'),
      l10n.t(
        'train.cache_features needs model.freeze "backbone" (it is "{0}"): cached features are only right while the backbone does not change',
        freeze,
      ),
      'train.cache_features',
      DiagnosticSeverity.Error,
      {
        kind: 'setValue',
        path: 'model.freeze',
        values: [{ label: l10n.t('Set model.freeze to "backbone"'), value: 'backbone' }],
      },
    );
  }
  const pretrained = doc.nodes.get('model.pretrained')?.value ?? null;
  if (valid && freeze !== 'none' && pretrained === null) {
    // The runner says the same at start (frozen_random_backbone). Only once the spec validates: a
    // spec still being fixed (or half written) gets its errors first.
    const freezeNode = doc.nodes.get('model.freeze');
    warn(
      freezeNode ?? doc.nodes.get('model.pretrained') ?? doc.nodes.get('model'),
      l10n.t(
        'model.freeze is "{0}"{1} but model.pretrained is null: the frozen layers keep their random initial weights, so only the head learns, on random features (accuracy stays near chance and the loss can grow); set model.pretrained to a checkpoint, or model.freeze to "none" to train every layer',
        freeze,
        freezeNode ? '' : l10n.t(' (the default)'),
      ),
      'frozen_random_backbone', // the runner's warning code for the same thing
      DiagnosticSeverity.Warning,
      freezeNode
        ? {
            kind: 'setValue',
            path: 'model.freeze',
            values: [{ label: l10n.t('Set model.freeze to "none" (train every layer)'), value: 'none' }],
          }
        : undefined,
    );
  }
  const ids = doc.nodes.get('device.ids')?.value;
  const batch = num(doc, 'data.batch_size') ?? (specDefault('data.batch_size') as number);
  if (Array.isArray(ids) && ids.length > 1 && Number.isInteger(batch) && batch % ids.length !== 0) {
    warn(
      at(doc, 'data.batch_size', 'device.ids'),
      l10n.t(
        'data.batch_size {0} does not divide over {1} NPUs: batch_size is per device, so the global batch is {2}; if you meant {3} in total, use a multiple of {4} and divide it by {5}',
        batch,
        ids.length,
        batch * ids.length,
        batch,
        ids.length,
        ids.length,
      ),
      'data.batch_size',
    );
  }
  return out;
}
