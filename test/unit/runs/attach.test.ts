import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import {
  attachWarning,
  FollowError,
  followRun,
  type AttachWarning,
  type FollowOptions,
  type ReconnectInfo,
} from '../../../src/core/runs/attach';
import { applyEvent, describe, initialView } from '../../../src/core/runs/state';
import type { RunEvent } from '../../../src/shared/eventsProtocol';

// The fake runner is a node script standing in for `python -m ascend_finetune`.
const FAKE = path.join(__dirname, '..', 'fixtures', 'fake-runner.mjs');
let runDir: string;
beforeEach(() => (runDir = mkdtempSync(path.join(tmpdir(), 'aft-attach-'))));
afterEach(() => rmSync(runDir, { recursive: true, force: true }));

function options(scenario: string, extra: Partial<FollowOptions> = {}): FollowOptions {
  return {
    runner: { python: process.execPath, launcher: [FAKE], env: { FAKE_SCENARIO: scenario } },
    runDir,
    backoffMs: 10,
    ...extra,
  };
}

function calls(): Array<{ command: string; since: number; args: string[]; pid: number }> {
  return readFileSync(path.join(runDir, 'calls.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

async function collect(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

test('a stream that dies mid-line is resumed with --since: no gap, no duplicate', async () => {
  const gaps: number[][] = [];
  const reconnects: ReconnectInfo[] = [];
  const torn: string[] = [];
  const events = await collect(
    followRun(
      options('drop-once', {
        onGap: (a, b) => gaps.push([a, b]),
        onReconnect: (r) => reconnects.push(r),
        onBadLine: (l) => torn.push(l),
      }),
    ),
  );
  assert.deepEqual(
    events.map((e) => e.seq),
    Array.from({ length: 12 }, (_, i) => i + 1),
  );
  assert.equal(events[0].type, 'run_started');
  assert.deepEqual((events[0] as { classes?: string[] }).classes, ['café', 'chien']);
  assert.equal(events.at(-1)?.type, 'run_finished');
  assert.deepEqual(gaps, []);
  assert.equal(torn.length, 1, 'the half-written sixth event is reported once');
  assert.deepEqual(
    calls().map((c) => c.args),
    [
      ['--since', '0'],
      ['--since', '5'],
    ],
  );
  assert.equal(reconnects.length, 1);
  assert.equal(reconnects[0].since, 5);
});

test('following from a known seq delivers only later events', async () => {
  const events = await collect(followRun(options('all', { since: 9 })));
  assert.deepEqual(
    events.map((e) => e.seq),
    [10, 11, 12],
  );
});

test('--no-follow ends quietly when the runner exits 0', async () => {
  const events = await collect(followRun(options('all', { follow: false, since: 10 })));
  assert.deepEqual(calls()[0].args, ['--since', '10', '--no-follow']);
  assert.equal(events.length, 2);
});

test('an error the runner reports is final: no retry', async () => {
  await assert.rejects(collect(followRun(options('error'))), (err: unknown) => {
    assert.ok(err instanceof FollowError);
    assert.equal(err.exitCode, 2);
    assert.equal(err.info?.kind, 'not_found');
    return true;
  });
  assert.equal(calls().length, 1);
});

test('retries are bounded when attaching keeps failing', async () => {
  const reconnects: ReconnectInfo[] = [];
  await assert.rejects(
    collect(followRun(options('always-drop', { maxRetries: 3, onReconnect: (r) => reconnects.push(r) }))),
    (err: unknown) =>
      err instanceof FollowError &&
      /gave up after 3 retries/.test(err.message) &&
      /connection closed/.test(err.stderrTail),
  );
  assert.equal(calls().length, 4);
  assert.deepEqual(
    reconnects.map((r) => r.delayMs),
    [10, 20, 40],
  );
});

test('stopping early kills the attach process', async () => {
  const seen: number[] = [];
  for await (const e of followRun(options('hang'))) {
    seen.push(e.seq);
    if (e.seq === 3) break;
  }
  assert.deepEqual(seen, [1, 2, 3]);
  const { pid } = calls()[0];
  await waitFor(() => !alive(pid));
});

test('an abort signal ends following without an error', async () => {
  const ctl = new AbortController();
  const seen: number[] = [];
  for await (const e of followRun(options('hang', { signal: ctl.signal }))) {
    seen.push(e.seq);
    if (e.seq === 3) ctl.abort();
  }
  assert.deepEqual(seen, [1, 2, 3]);
  assert.equal(calls().length, 1);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('events of the wrong types are skipped with a warning; the stream goes on and later events arrive', async () => {
  const envelope = (seq: number, type: string) => ({ v: 1, seq, t: 1700000000 + seq, type });
  const lines = [
    { ...envelope(1, 'run_started'), run_id: 'r', spec: null },
    { ...envelope(2, 'step'), epoch: '3', step: 1, loss: 0.9 },
    { ...envelope(3, 'step'), epoch: { toString: 1, valueOf: 1 }, step: 2, loss: 0.8 },
    { ...envelope(4, 'run_started'), run_id: 'r', spec: { train: { epochs: 2 } }, total_steps: 4 },
    { ...envelope(5, 'step'), epoch: 1, step: 3, loss: 0.5, lr: 0.01, overflow: false },
    { ...envelope(6, 'eval'), epoch: 1, step: 3, val_acc: 'high' },
    { ...envelope(7, 'eval'), epoch: 1, step: 3, val_acc: 0.9, per_class_acc: [0.9], confusion: null },
    { ...envelope(8, 'checkpoint'), file: 'a.ckpt', bytes: null }, // written as 1e999, which JSON.parse makes Infinity
    { ...envelope(9, 'run_finished'), status: 'completed', error: null, best: null, final: null },
  ];
  // The JSONL file the runner would write, served by a stand-in for `attach` that prints it.
  const file = path.join(runDir, 'events.jsonl');
  writeFileSync(file, lines.map((l) => JSON.stringify(l).replace('"bytes":null', '"bytes":1e999')).join('\n') + '\n');
  const script = `process.stdout.write(require('fs').readFileSync(${JSON.stringify(file)}))`;
  const bad: string[] = [];
  const gaps: number[][] = [];
  const reconnects: ReconnectInfo[] = [];
  const events = await collect(
    followRun({
      runner: { python: process.execPath, launcher: ['-e', script] },
      runDir,
      backoffMs: 10,
      onBadLine: (_line, e) => bad.push(e.message),
      onGap: (a, b) => gaps.push([a, b]),
      onReconnect: (r) => reconnects.push(r),
    }),
  );
  assert.deepEqual(
    events.map((e) => e.seq),
    [4, 5, 7, 9],
  );
  assert.deepEqual(gaps, [], 'a skipped event is no gap');
  assert.deepEqual(reconnects, [], 'nor a reason to reconnect');
  assert.equal(bad.length, 5);
  assert.match(bad[0], /run_started seq 1: spec is null, expected an object/);
  assert.match(bad[4], /checkpoint seq 8: bytes is Infinity, expected a finite number/);
  // What the Runs view does with the stream: nothing throws, the good events count.
  let view = initialView();
  for (const e of events) view = applyEvent(view, e);
  assert.equal(describe(view), 'epoch 1/2 · loss 0.500 · best 90.0%');
  assert.equal(view.phase, 'finished');
});

test("attach's stderr warnings (bad_line) are handed over for the log, never a failure; other stderr stays in the tail", async () => {
  const warnings: AttachWarning[] = [];
  const events = await collect(followRun(options('bad-lines', { onRunnerWarning: (w) => warnings.push(w) })));
  assert.equal(events.length, 12);
  assert.equal(events.at(-1)?.type, 'run_finished');
  assert.deepEqual(warnings, [
    { kind: 'bad_line', line: 3, message: 'events.jsonl line 3 skipped: not JSON' },
    { kind: 'bad_line', line: 7, message: 'events.jsonl line 7 skipped: no seq' },
  ]);
  assert.equal(attachWarning('noise'), undefined);
  assert.equal(attachWarning('{"warning": 5}'), undefined);
  assert.deepEqual(attachWarning('{"warning": {"kind": "bad_line"}}'), {
    kind: 'bad_line',
    message: '{"kind":"bad_line"}',
  });
});

test('a bad_run error is final, with its kind for the glue to word', async () => {
  await assert.rejects(collect(followRun(options('bad-run'))), (e: unknown) => {
    assert.ok(e instanceof FollowError);
    assert.equal(e.info?.kind, 'bad_run');
    return true;
  });
  assert.equal(calls().length, 1, 'not retried');
});
