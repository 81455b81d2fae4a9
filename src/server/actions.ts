// Hover, quick fixes and code lenses of a spec file.
import * as l10n from './l10n';
import {
  CodeActionKind,
  MarkupKind,
  type CodeAction,
  type CodeLens,
  type Diagnostic,
  type Hover,
} from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { yamlScalar } from '../core/spec/writer';
import type { SpecTargetInfo } from '../shared/specProtocol';
import { SOURCE, type FixData } from './diagnostics';
import { fieldMarkdown } from './fieldDocs';
import { backboneStages, isFreezePath, stagesNote } from './freezeStages';
import { nodeAt, type SpecDocument } from './specDocument';

export function hover(doc: SpecDocument, td: TextDocument, offset: number): Hover | undefined {
  const hit = nodeAt(doc, offset);
  if (!hit) return undefined;
  const segs = hit.node.path.split('.');
  const stages = isFreezePath(segs) ? backboneStages(doc) : undefined;
  const value = fieldMarkdown(segs, hit.node.value, stages && { values: stages.values, note: stagesNote(stages) });
  if (!value) return undefined;
  const span = hit.onKey && hit.node.keySpan ? hit.node.keySpan : hit.node.valueSpan;
  return {
    contents: { kind: MarkupKind.Markdown, value },
    range: { start: td.positionAt(span.start), end: td.positionAt(span.end) },
  };
}

/** Quick fixes for the diagnostics that carry a fix: rename an unknown key, set a value. */
export function quickFixes(doc: SpecDocument, td: TextDocument, diagnostics: Diagnostic[]): CodeAction[] {
  const out: CodeAction[] = [];
  for (const d of diagnostics) {
    if (d.source !== SOURCE || !d.data) continue;
    const fix = d.data as FixData;
    const node = doc.nodes.get(fix.path);
    if (!node) continue;
    if (fix.kind === 'renameKey' && node.keySpan) {
      const newText = doc.kind === 'json' ? JSON.stringify(fix.to) : fix.to;
      out.push(action(l10n.t('Rename to "{0}"', fix.to), d, td, node.keySpan, newText, true));
    } else if (fix.kind === 'setValue') {
      fix.values.forEach((v, i) => {
        const newText =
          typeof v.value === 'string' && doc.kind === 'yaml' ? yamlScalar(v.value) : JSON.stringify(v.value);
        out.push(action(v.label, d, td, node.valueSpan, newText, i === 0));
      });
    }
  }
  return out;
}

function action(
  title: string,
  d: Diagnostic,
  td: TextDocument,
  span: { start: number; end: number },
  newText: string,
  preferred: boolean,
): CodeAction {
  return {
    title,
    kind: CodeActionKind.QuickFix,
    diagnostics: [d],
    isPreferred: preferred,
    edit: {
      changes: { [td.uri]: [{ range: { start: td.positionAt(span.start), end: td.positionAt(span.end) }, newText }] },
    },
  };
}

/** A run the extension knows, as the client sends it (`ascend/runs`), newest first. */
export interface KnownRun {
  name: string;
  targetId: string;
  runId: string;
  state: string;
  startedAt: number;
}

export const COMMANDS = {
  start: 'ascend.startSpecFile',
  openRun: 'ascend.openLastRun',
  previewData: 'ascend.previewData',
} as const;

/**
 * "Start fine-tune" (on the spec's target, named when it is not this machine, or pick one), when
 * runs of this spec's name exist "Open last run", and "Preview data" on the `data.train` line.
 */
export function codeLenses(
  doc: SpecDocument,
  uri: string,
  runs: readonly KnownRun[],
  target?: SpecTargetInfo,
): CodeLens[] {
  const range = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  const on = target && target.kind !== 'local' ? l10n.t(' on {0}', target.label) : '';
  const lenses: CodeLens[] = [
    {
      range,
      command: { title: l10n.t('$(rocket) Start fine-tune{0}', on), command: COMMANDS.start, arguments: [uri] },
    },
    {
      range,
      command: { title: l10n.t('Start on target…'), command: COMMANDS.start, arguments: [uri, { pickTarget: true }] },
    },
  ];
  const name =
    typeof (doc.value as { name?: unknown } | undefined)?.name === 'string'
      ? (doc.value as { name: string }).name
      : 'run';
  const last = runs.filter((r) => r.name === name).sort((a, b) => b.startedAt - a.startedAt)[0];
  if (last) {
    lenses.push({
      range,
      command: {
        title: l10n.t('Open last run ({0}, {1})', last.state, last.runId),
        command: COMMANDS.openRun,
        arguments: [{ targetId: last.targetId, runId: last.runId }],
      },
    });
  }
  const train = doc.nodes.get('data.train');
  if (train && typeof train.value === 'string' && train.value !== '') {
    const at = train.keySpan?.start ?? train.valueSpan.start;
    const line = doc.text.slice(0, at).split('\n').length - 1;
    const where = { start: { line, character: 0 }, end: { line, character: 0 } };
    lenses.push({
      range: where,
      command: { title: l10n.t('$(eye) Preview data'), command: COMMANDS.previewData, arguments: [{ spec: uri }] },
    });
  }
  return lenses;
}
