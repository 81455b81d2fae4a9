// The run-spec language server: its own Node process, started by the extension over IPC (or by
// tests over stdio). The language logic lives in the modules next to this one, without `vscode`;
// this file only wires them to the connection.
import * as l10n from './l10n';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CodeActionKind,
  CodeLensRefreshRequest,
  createConnection,
  ProposedFeatures,
  TextDocuments,
  TextDocumentSyncKind,
  type Diagnostic,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  asSpecTargets,
  PROBE_REQUEST,
  RUNS_NOTIFICATION,
  SPEC_TARGETS_NOTIFICATION,
  WEIGHTS_CHANGED_NOTIFICATION,
  WEIGHTS_STATUS_REQUEST,
  type ProbeParams,
  type SpecTargetInfo,
  type SpecTargets,
  type WeightsStatusParams,
} from '../shared/specProtocol';
import { codeLenses, hover, quickFixes, type KnownRun } from './actions';
import { complete, isCatalogWeightsItem } from './completion';
import { diagnose, type RemoteFacts } from './diagnostics';
import { RemoteFactsStore, wantedPaths } from './remoteFacts';
import { parseSpecDocument, type SpecDocument } from './specDocument';
import { TargetWeightsStore } from './targetWeights';
import { isSweepFile } from '../core/sweeps/schema';
import { completeSweep, diagnoseSweep, hoverSweep } from './sweepLanguage';

export { RUNS_NOTIFICATION };

const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);
const parsed = new Map<string, { version: number; doc: SpecDocument; diagnostics: Diagnostic[] }>();
let runs: KnownRun[] = [];
let localChecks = true;
let canRefreshLenses = false;
/** Which target each spec is for (the extension says; until it does, this machine). */
let specTargets: SpecTargets = asSpecTargets(undefined);
const remote = new RemoteFactsStore(
  (params: ProbeParams) => connection.sendRequest(PROBE_REQUEST, params),
  (uri) => republish(uri),
);
/** The SSH targets' weights caches, for model.pretrained's completion (asked through the extension, kept a minute). */
const targetWeights = new TargetWeightsStore((params: WeightsStatusParams) =>
  connection.sendRequest(WEIGHTS_STATUS_REQUEST, params),
);
/** How long the first model.pretrained completion for a target waits for its answer; later ones never wait. */
const FIRST_ANSWER_WAIT_MS = 2500;

function fileOf(uri: string): string | undefined {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : undefined;
  } catch {
    return undefined;
  }
}

function baseDirOf(uri: string): string {
  const f = fileOf(uri);
  return f ? path.dirname(f) : process.cwd();
}

function targetOf(uri: string): SpecTargetInfo {
  return specTargets.files[uri] ?? specTargets.default;
}

function stateOf(td: TextDocument) {
  const have = parsed.get(td.uri);
  if (have && have.version === td.version) return have;
  const doc = parseSpecDocument(td.getText(), td.uri);
  let diagnostics: Diagnostic[];
  try {
    if (isSweepFile(td.uri)) {
      // A sweep spec (src/server/sweepLanguage.ts): its own schema; no target facts or lenses.
      const state = { version: td.version, doc, diagnostics: diagnoseSweep(doc, td) };
      parsed.set(td.uri, state);
      return state;
    }
    const target = targetOf(td.uri);
    const baseDir = baseDirOf(td.uri);
    // A spec for an SSH target: its paths are checked there, through the extension (never blocks).
    let facts: RemoteFacts | undefined;
    if (target.kind !== 'local' && doc.value !== undefined && !doc.errors.length)
      facts = remote.factsFor(td.uri, target, wantedPaths(doc, baseDir));
    diagnostics = diagnose(doc, td, {
      baseDir,
      local: target.kind === 'local' && localChecks && fileOf(td.uri) !== undefined,
      remote: facts,
    });
  } catch (e) {
    diagnostics = [
      {
        range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        message: l10n.t('the spec checker failed: {0}', (e as Error).message),
        source: 'ascend-run',
      },
    ];
  }
  const state = { version: td.version, doc, diagnostics };
  parsed.set(td.uri, state);
  return state;
}

/** Diagnoses a document again (new facts about its target) and publishes the result. */
function republish(uri: string): void {
  const td = documents.get(uri);
  if (!td) return;
  parsed.delete(uri);
  void connection.sendDiagnostics({ uri, version: td.version, diagnostics: stateOf(td).diagnostics });
}

connection.onInitialize((params) => {
  l10n.setLocale(params.locale); // diagnostics, hovers and quick fixes in the client's display language
  const opts = (params.initializationOptions ?? {}) as { localChecks?: boolean; specTargets?: unknown };
  if (opts.localChecks === false) localChecks = false;
  if (opts.specTargets !== undefined) specTargets = asSpecTargets(opts.specTargets);
  canRefreshLenses = params.capabilities.workspace?.codeLens?.refreshSupport === true;
  return {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      completionProvider: { triggerCharacters: ['"', ':', ' ', '/'] },
      hoverProvider: true,
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
      codeLensProvider: { resolveProvider: false },
    },
    serverInfo: { name: 'ascend-run' },
  };
});

documents.onDidChangeContent((e) => {
  const { diagnostics } = stateOf(e.document);
  void connection.sendDiagnostics({ uri: e.document.uri, version: e.document.version, diagnostics });
});

documents.onDidClose((e) => {
  parsed.delete(e.document.uri);
  remote.forget(e.document.uri);
  void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
});

connection.onCompletion(async (p) => {
  const td = documents.get(p.textDocument.uri);
  if (!td) return [];
  if (isSweepFile(td.uri)) return completeSweep(stateOf(td).doc, td, td.offsetAt(p.position));
  const target = targetOf(td.uri);
  const run = () =>
    complete(stateOf(td).doc, td, td.offsetAt(p.position), baseDirOf(td.uri), targetWeights.view(target));
  const items = run();
  // Only a completion that offers catalog weights asks the target, and only when its answer is missing or old.
  if (!items.some(isCatalogWeightsItem) || !targetWeights.needsAsking(target)) return items;
  const asked = targetWeights.ask(target);
  if (targetWeights.view(target).entries) return items; // an older answer now, the new one next time
  await Promise.race([asked, new Promise((r) => setTimeout(r, FIRST_ANSWER_WAIT_MS))]);
  return run();
});

connection.onHover((p) => {
  const td = documents.get(p.textDocument.uri);
  if (td && isSweepFile(td.uri)) return hoverSweep(stateOf(td).doc, td, td.offsetAt(p.position)) ?? null;
  return td ? (hover(stateOf(td).doc, td, td.offsetAt(p.position)) ?? null) : null;
});

connection.onCodeAction((p) => {
  const td = documents.get(p.textDocument.uri);
  if (!td || isSweepFile(td.uri)) return [];
  const { doc, diagnostics } = stateOf(td);
  // Our own diagnostics in the range (they carry the fix data), whatever the client sent back.
  const inRange = diagnostics.filter(
    (d) => !(d.range.end.line < p.range.start.line || d.range.start.line > p.range.end.line),
  );
  return quickFixes(doc, td, inRange);
});

connection.onCodeLens((p) => {
  const td = documents.get(p.textDocument.uri);
  return td && !isSweepFile(td.uri) ? codeLenses(stateOf(td).doc, td.uri, runs, targetOf(td.uri)) : [];
});

connection.onNotification(RUNS_NOTIFICATION, (list: unknown) => {
  runs = Array.isArray(list)
    ? (list as KnownRun[]).filter((r) => r && typeof r.name === 'string' && typeof r.runId === 'string')
    : [];
  if (canRefreshLenses) void connection.sendRequest(CodeLensRefreshRequest.type);
});

connection.onNotification(SPEC_TARGETS_NOTIFICATION, (targets: unknown) => {
  specTargets = asSpecTargets(targets);
  targetWeights.clear();
  for (const td of documents.all()) republish(td.uri);
  if (canRefreshLenses) void connection.sendRequest(CodeLensRefreshRequest.type);
});

connection.onNotification(WEIGHTS_CHANGED_NOTIFICATION, (p: unknown) => {
  const id = (p as { targetId?: unknown } | null)?.targetId;
  if (typeof id === 'string') targetWeights.forget(id);
});

documents.listen(connection);
connection.listen();
