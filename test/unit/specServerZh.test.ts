// The spec language server for a zh-cn client (LSP `initialize` params `locale`, as VS Code sends
// vscode.env.language): its own diagnostics, quick-fix titles and hovers come in Simplified Chinese,
// the field names and values stay as written. The real bundled server, over stdio.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  type CodeAction,
  type Diagnostic,
  type Hover,
  type MessageConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver/node';
import { startSpecServer, type SpecServer } from '../support/specServer';

let work: string;
let proc: ChildProcess;
let server: SpecServer | undefined;
let conn: MessageConnection;
const published = new Map<string, Diagnostic[]>();
const waiters: (() => void)[] = [];

before(async () => {
  server = await startSpecServer('spec-server-zh-');
  ({ work, proc, conn } = server);
  conn.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
    published.set(p.uri, p.diagnostics);
    waiters.splice(0).forEach((w) => w());
  });
  conn.onRequest('workspace/codeLens/refresh', () => null);
  conn.listen();
  await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: null,
    locale: 'zh-cn',
    capabilities: {},
    initializationOptions: { localChecks: false },
  });
  await conn.sendNotification('initialized', {});
});

after(() => {
  server?.stop();
});

async function open(uri: string, text: string): Promise<Diagnostic[]> {
  published.delete(uri);
  await conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'ascend-run', version: 1, text },
  });
  while (!published.has(uri)) {
    assert.ok(proc.exitCode === null, 'the server is alive');
    await new Promise<void>((r) => waiters.push(r));
  }
  return published.get(uri)!;
}

test('a zh-cn client gets Chinese advice, quick-fix titles and hovers', { timeout: 60_000 }, async () => {
  const uri = pathToFileURL(path.join(work, 'zh.ascend.yaml')).toString();
  const text = 'name: zh\ndata:\n  train: /data/flowers\nmodel:\n  pretrained: null\n  freeze: backbone\n';
  const diags = await open(uri, text);
  const freeze = diags.find((d) => d.range.start.line === 5);
  assert.ok(freeze, `an advice on model.freeze: ${JSON.stringify(diags)}`);
  assert.match(
    String(freeze.message),
    /^model\.freeze 为 "backbone"，但 model\.pretrained 为 null：冻结的层保持随机初始权重/,
  );
  const actions = (await conn.sendRequest('textDocument/codeAction', {
    textDocument: { uri },
    range: freeze.range,
    context: { diagnostics: [freeze] },
  })) as CodeAction[];
  assert.ok(
    actions.some((a) => a.title === '将 model.freeze 设为 "none"（训练每一层）'),
    actions.map((a) => a.title).join('; '),
  );
  const hover = (await conn.sendRequest('textDocument/hover', {
    textDocument: { uri },
    position: { line: 5, character: 4 },
  })) as Hover;
  assert.match((hover.contents as { value: string }).value, /\*\*`model\.freeze`\*\* · 默认值 `"backbone"`/);
});
