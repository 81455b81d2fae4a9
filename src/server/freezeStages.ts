// model.freeze and model.unfreeze's steps per backbone: the schema's enum holds every backbone's
// stages (runner/ascend_finetune/backbones.json, layer1-4 for the runner's ResNets), and the runner
// refuses a stage the chosen backbone lacks (spec.py `_stage_problems`). Completion offers only the
// spec backbone's values, hover lists its stages, and a stage it lacks is an error with a fix per stage.
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';
import { freezeModesFor, isMindcvBackbone } from '../core/spec/builder';
import { enumOf, specDefault } from '../core/spec/fields';
import { joined } from '../shared/l10n';
import { SOURCE, type FixData } from './fixData';
import * as l10n from './l10n';
import type { Span, SpecDocument } from './specDocument';

export interface BackboneStages {
  backbone: string;
  /** Its freeze values (the default first), e.g. `backbone, none, up_to:layer1, …`. */
  values: readonly string[];
  /** Its stage names, e.g. `layer1`…`layer4`. */
  stages: string[];
}

const UNFREEZE_STEP = /^model\.unfreeze\[\d+\]\.freeze$/;

/** A freeze field: `model.freeze`, or `freeze` of a model.unfreeze step (JSON `['model','unfreeze','0','freeze']`, YAML without the index). */
export function isFreezePath(segs: readonly string[]): boolean {
  const p = segs.filter((s) => !/^\d+$/.test(s)).map((s) => s.replace(/\[\d+\]$/, ''));
  return p.join('.') === 'model.freeze' || p.join('.') === 'model.unfreeze.freeze';
}

/** The stages of the spec's backbone (written, or the default); undefined for a backbone the schema does not know. */
export function backboneStages(doc: SpecDocument): BackboneStages | undefined {
  const backbone = doc.nodes.get('model.backbone')?.value ?? specDefault('model.backbone');
  if (typeof backbone !== 'string' || !enumOf('model.backbone').includes(backbone)) return undefined;
  const values = freezeModesFor(backbone);
  const stages = values.filter((v) => v.startsWith('up_to:')).map((v) => v.slice('up_to:'.length));
  return { backbone, values, stages };
}

/** Hover/completion words: the backbone's stages. */
export function stagesNote(s: BackboneStages): string {
  return l10n.t(
    'Stages of {0}: {1}',
    s.backbone,
    joined(
      s.stages.map((x) => `\`${x}\``),
      l10n.t,
    ),
  );
}

/** An error for each freeze value naming a stage the backbone lacks, with a quick fix per stage it has. */
export function stageDiagnostics(
  doc: SpecDocument,
  range: (s: Span) => Diagnostic['range'],
  bad: Set<string>,
): Diagnostic[] {
  const s = backboneStages(doc);
  if (!s || bad.has('model.backbone')) return [];
  const known = enumOf('model.freeze');
  const out: Diagnostic[] = [];
  for (const node of doc.nodes.values()) {
    if (node.path !== 'model.freeze' && !UNFREEZE_STEP.test(node.path)) continue;
    const v = node.value;
    // Values the schema refuses already have their problem (on the field, or on model.unfreeze).
    if (typeof v !== 'string' || !v.startsWith('up_to:') || !known.includes(v) || s.values.includes(v)) continue;
    if (bad.has(node.path) || (node.path !== 'model.freeze' && bad.has('model.unfreeze'))) continue;
    out.push({
      range: range(node.valueSpan),
      severity: DiagnosticSeverity.Error,
      source: SOURCE,
      code: node.path,
      message: l10n.t(
        '{0} has no stage "{1}": its stages are {2} (set {3} to one of: {4})',
        s.backbone,
        v.slice('up_to:'.length),
        joined(s.stages, l10n.t),
        node.path,
        joined(s.values, l10n.t),
      ),
      data: {
        kind: 'setValue',
        path: node.path,
        values: s.stages.map((x) => ({ label: l10n.t('Change to "{0}"', `up_to:${x}`), value: `up_to:${x}` })),
      } satisfies FixData,
    });
  }
  if (!out.length) out.push(...orderDiagnostics(doc, s, range, bad));
  return out;
}

/**
 * How many leading parts (stem, stages, a mindcv model's neck) a freeze value freezes: the runner's
 * backbones.frozen_parts. `backbone` freezes a runner ResNet's stem and 4 stages (as up_to:layer4 does),
 * a mindcv model's neck too. Undefined for a value the backbone does not have.
 */
export function frozenParts(value: unknown, s: BackboneStages): number | undefined {
  if (value === 'none') return 0;
  if (value === 'backbone') return 1 + s.stages.length + (isMindcvBackbone(s.backbone) ? 1 : 0);
  const i = typeof value === 'string' && value.startsWith('up_to:') ? s.stages.indexOf(value.slice(6)) : -1;
  return i < 0 ? undefined : i + 2;
}

/**
 * model.unfreeze's steps in the runner's order (spec.py's _unfreeze_order_problems, train/unfreeze.py's
 * order_issues): each in a later epoch than the step before and freezing no more than the rule before it
 * (model.freeze before the first). The runner refuses either at launch (unfreeze_out_of_order); here the
 * error sits on the step's `epoch` or `freeze`, the latter with a fix per value that freezes no more.
 * A step out of order is skipped: the next is held to the last good one.
 */
function orderDiagnostics(
  doc: SpecDocument,
  s: BackboneStages,
  range: (s: Span) => Diagnostic['range'],
  bad: Set<string>,
): Diagnostic[] {
  if ([...bad].some((p) => /^model\.(backbone|freeze|unfreeze)\b/.test(p))) return [];
  const model = (doc.value as { model?: unknown } | undefined)?.model;
  const steps = typeof model === 'object' && model !== null ? (model as { unfreeze?: unknown }).unfreeze : undefined;
  if (!Array.isArray(steps) || !steps.length) return [];
  const freeze = doc.nodes.get('model.freeze')?.value ?? specDefault('model.freeze');
  let prev = frozenParts(freeze, s);
  const parts = steps.map((st) => frozenParts((st as { freeze?: unknown }).freeze, s));
  if (prev === undefined || parts.some((p) => p === undefined)) return [];
  let prevPath = 'model.freeze';
  let prevEpoch = 1;
  let prevRule = String(freeze);
  const out: Diagnostic[] = [];
  steps.forEach((st: { epoch: number; freeze: string }, i) => {
    const now = parts[i]!;
    const field = st.epoch <= prevEpoch ? 'epoch' : now > prev! ? 'freeze' : undefined;
    if (field === undefined) {
      [prevPath, prevEpoch, prevRule, prev] = [`model.unfreeze[${i}]`, st.epoch, st.freeze, now];
      return;
    }
    const path = `model.unfreeze[${i}].${field}`;
    const node = doc.nodes.get(path);
    if (!node) return;
    const diagnostic: Diagnostic = {
      range: range(node.valueSpan),
      severity: DiagnosticSeverity.Error,
      source: SOURCE,
      code: path,
      message: '',
    };
    if (field === 'epoch') {
      diagnostic.message = l10n.t(
        'epoch {0} does not come after epoch {1} of {2}: the steps of model.unfreeze take effect in increasing epochs (set {3} to an epoch after {4}, or list the steps in increasing epochs)',
        st.epoch,
        prevEpoch,
        prevPath,
        path,
        prevEpoch,
      );
    } else {
      const allowed = s.values.filter((v) => frozenParts(v, s)! <= prev!);
      diagnostic.message = l10n.t(
        '"{0}" freezes more of {1} than {2} "{3}": each step of model.unfreeze freezes no more than the rule before it (set {4} to a rule that freezes no more than "{5}": {6})',
        st.freeze,
        s.backbone,
        prevPath === 'model.freeze' ? prevPath : `${prevPath}.freeze`,
        prevRule,
        path,
        prevRule,
        joined(allowed, l10n.t),
      );
      diagnostic.data = {
        kind: 'setValue',
        path,
        values: allowed.map((v) => ({ label: l10n.t('Change to "{0}"', v), value: v })),
      } satisfies FixData;
    }
    out.push(diagnostic);
  });
  return out;
}
