// The run-spec language server: its own Node process, started by the extension over IPC (or by
// tests over stdio). The language logic lives in the modules next to this one, without `vscode`;
// this file only wires them to the connection.
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
import { codeLenses, hover, quickFixes, type KnownRun } from './actions';
import { complete } from './completion';
import { diagnose } from './diagnostics';
import { parseSpecDocument, type SpecDocument } from './specDocument';

/** Custom notification: the runs the extension knows, for "Open last run". */
export const RUNS_NOTIFICATION = 'ascend/runs';

const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);
const parsed = new Map<string, { version: number; doc: SpecDocument; diagnostics: Diagnostic[] }>();
let runs: KnownRun[] = [];
let localChecks = true;
let canRefreshLenses = false;

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

function stateOf(td: TextDocument) {
  const have = parsed.get(td.uri);
  if (have && have.version === td.version) return have;
  const doc = parseSpecDocument(td.getText(), td.uri);
  let diagnostics: Diagnostic[];
  try {
    diagnostics = diagnose(doc, td, { baseDir: baseDirOf(td.uri), local: localChecks && fileOf(td.uri) !== undefined });
  } catch (e) {
    diagnostics = [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, message: `the spec checker failed: ${(e as Error).message}`, source: 'ascend-run' }];
  }
  const state = { version: td.version, doc, diagnostics };
  parsed.set(td.uri, state);
  return state;
}

connection.onInitialize((params) => {
  const opts = (params.initializationOptions ?? {}) as { localChecks?: boolean };
  if (opts.localChecks === false) localChecks = false;
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
  void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
});

connection.onCompletion((p) => {
  const td = documents.get(p.textDocument.uri);
  return td ? complete(stateOf(td).doc, td, td.offsetAt(p.position), baseDirOf(td.uri)) : [];
});

connection.onHover((p) => {
  const td = documents.get(p.textDocument.uri);
  return td ? (hover(stateOf(td).doc, td, td.offsetAt(p.position)) ?? null) : null;
});

connection.onCodeAction((p) => {
  const td = documents.get(p.textDocument.uri);
  if (!td) return [];
  const { doc, diagnostics } = stateOf(td);
  // Our own diagnostics in the range (they carry the fix data), whatever the client sent back.
  const inRange = diagnostics.filter((d) => !(d.range.end.line < p.range.start.line || d.range.start.line > p.range.end.line));
  return quickFixes(doc, td, inRange);
});

connection.onCodeLens((p) => {
  const td = documents.get(p.textDocument.uri);
  return td ? codeLenses(stateOf(td).doc, td.uri, runs) : [];
});

connection.onNotification(RUNS_NOTIFICATION, (list: unknown) => {
  runs = Array.isArray(list) ? (list as KnownRun[]).filter((r) => r && typeof r.name === 'string' && typeof r.runId === 'string') : [];
  if (canRefreshLenses) void connection.sendRequest(CodeLensRefreshRequest.type);
});

documents.listen(connection);
connection.listen();
