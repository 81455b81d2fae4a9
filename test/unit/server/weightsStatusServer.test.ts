// model.pretrained completion over LSP, the language server's bundle in its own process: for a spec
// meant for an SSH target, the catalog items say what THAT target's cache holds (asked through the
// client once, WEIGHTS_STATUS_REQUEST, and kept: more completions send no more questions); a target
// that does not answer in time, or is not configured, is "not known", never "cached".
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { type CompletionItem, type MessageConnection } from 'vscode-languageserver/node';
import { startSpecServer, type SpecServer } from '../../support/specServer';
import {
  SPEC_TARGETS_NOTIFICATION,
  WEIGHTS_CHANGED_NOTIFICATION,
  WEIGHTS_STATUS_REQUEST,
  type SpecTargets,
  type WeightsStatusParams,
} from '../../../src/shared/specProtocol';

let server: SpecServer | undefined;
let conn: MessageConnection;
const asked: string[] = [];
let answer: (p: WeightsStatusParams) => Promise<unknown> = async () => ({ ok: false, message: 'unset' });

before(async () => {
  server = await startSpecServer('spec-server-weights-', (work) => ({
    ...process.env,
    // This machine's cache is empty and not the target's: only the target's answer may say "cached".
    ASCEND_FINETUNE_CACHE: path.join(work, 'local cache'),
  }));
  conn = server.conn;
  conn.onNotification('textDocument/publishDiagnostics', () => {});
  conn.onRequest('ascend/probePaths', async () => ({ ok: false, message: 'no probe here' }));
  conn.onRequest(WEIGHTS_STATUS_REQUEST, (p: WeightsStatusParams) => {
    asked.push(p.targetId);
    return answer(p);
  });
  conn.listen();
  await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  await conn.sendNotification('initialized', {});
});

after(() => {
  server?.stop();
});

const TEXT = 'model:\n  backbone: resnet18\n  pretrained: \n';
const AT = { line: 2, character: 14 };
let version = 1;

async function completeAt(uri: string, files: SpecTargets['files']): Promise<CompletionItem | undefined> {
  await conn.sendNotification(SPEC_TARGETS_NOTIFICATION, {
    default: { id: 'local', label: 'this machine', kind: 'local' },
    files,
  } satisfies SpecTargets);
  await conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'ascend-run', version: version++, text: TEXT },
  });
  const res = (await conn.sendRequest('textDocument/completion', { textDocument: { uri }, position: AT })) as
    CompletionItem[] | { items: CompletionItem[] };
  const items = Array.isArray(res) ? res : res.items;
  return items.find((i) => i.label === 'mindcv:resnet18');
}

const BOX = { id: 'ssh:npu-box', label: 'npu-box', kind: 'ssh' } as const;

test("the SSH target's own cache, asked once and kept", async () => {
  answer = async () => ({
    ok: true,
    sources: [
      { source: 'mindcv:resnet18', path: '/home/u/w/r18.ckpt', state: 'cached', bytes: 46_830_571, partBytes: 0 },
    ],
  });
  const uri = 'file:///w/a.ascend.yaml';
  const first = await completeAt(uri, { [uri]: BOX });
  assert.equal(first?.labelDetails?.description, 'cached on npu-box (46.8 MB)');
  const again = await completeAt(uri, { [uri]: BOX });
  assert.equal(again?.labelDetails?.description, 'cached on npu-box (46.8 MB)');
  // (Each targets notification forgets what was known, so each completeAt asked once.) A plain
  // completion now asks nothing: the answer is kept.
  const before = asked.length;
  const res = (await conn.sendRequest('textDocument/completion', { textDocument: { uri }, position: AT })) as
    CompletionItem[] | { items: CompletionItem[] };
  const items = Array.isArray(res) ? res : res.items;
  assert.equal(
    items.find((i) => i.label === 'mindcv:resnet18')?.labelDetails?.description,
    'cached on npu-box (46.8 MB)',
  );
  assert.equal(asked.length, before, 'no SSH call for a completion within the minute');
  assert.ok(asked.every((id) => id === 'ssh:npu-box'));
  // Weights were copied there: the next completion asks again and shows the new state.
  answer = async () => ({
    ok: true,
    sources: [{ source: 'mindcv:resnet18', path: '/x', state: 'missing', bytes: null, partBytes: 0 }],
  });
  await conn.sendNotification(WEIGHTS_CHANGED_NOTIFICATION, { targetId: 'ssh:npu-box' });
  const after_ = (await conn.sendRequest('textDocument/completion', { textDocument: { uri }, position: AT })) as
    CompletionItem[] | { items: CompletionItem[] };
  const list = Array.isArray(after_) ? after_ : after_.items;
  assert.equal(
    list.find((i) => i.label === 'mindcv:resnet18')?.labelDetails?.description,
    'downloads on npu-box (46.8 MB)',
  );
  assert.equal(asked.length, before + 1);
});

test('a target that does not answer in time, or is not configured: not known, never "cached"', async () => {
  answer = () => new Promise(() => {}); // an unreachable box whose ssh hangs
  const uri = 'file:///w/b.ascend.yaml';
  const t0 = Date.now();
  const slow = await completeAt(uri, { [uri]: { id: 'ssh:far', label: 'far', kind: 'ssh' } });
  assert.ok(Date.now() - t0 < 10_000, 'the completion did not wait for the target');
  assert.equal(slow?.labelDetails?.description, 'not known on far');
  const n = asked.length;
  const gone = await completeAt('file:///w/c.ascend.yaml', {
    'file:///w/c.ascend.yaml': { id: 'ssh:gone', label: 'ssh:gone', kind: 'unknown' },
  });
  assert.equal(gone?.labelDetails?.description, 'not known on ssh:gone');
  assert.match(String((gone?.documentation as { value: string }).value), /"ssh:gone" is not a configured target/);
  assert.equal(asked.length, n, 'an unknown target is not asked');
});
