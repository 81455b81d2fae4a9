// model.freeze and model.unfreeze's steps per backbone: the schema's enum holds every backbone's
// stages (runner/ascend_finetune/backbones.json, layer1-4 for the runner's ResNets), and the runner
// refuses a stage the chosen backbone lacks (spec.py `_stage_problems`). Completion offers only the
// spec backbone's values, hover lists its stages, and a stage it lacks is an error with a fix per stage.
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';
import { freezeModesFor } from '../core/spec/builder';
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
  return out;
}
