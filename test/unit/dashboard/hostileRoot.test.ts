// The browser dashboard on a hostile runs root (test/support/hostileRoot.ts): symlinks to
// /dev/zero, FIFOs, a directory where a file should be, wrong-typed JSON and events, a 10 MB line,
// next to a completed run and a live one. The server runs as the CLI does, in its own process: it
// must start within a bound, list and serve every good run (following the live one), report each
// bad run as bad (in the list and as a banner in its tab), and exit on one SIGTERM.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { HostMessage } from '../../../src/shared/dashboardProtocol';
import { get, inbox, openSocket } from '../../support/dashboardClient';
import { buildHostileRoot, type HostileRoot } from '../../support/hostileRoot';

const START_BOUND_MS = 15_000; // tsx compiling the CLI on a loaded 2-core machine; the server itself takes ms
const CHILD = path.join(__dirname, 'cliChild.ts');

interface ListedRun {
  key: string;
  runId: string;
  name: string;
  problem?: string | null;
}

const tmp = mkdtempSync(path.join(tmpdir(), 'dash-hostile-'));
let h: HostileRoot;
let child: ChildProcess;
let port = 0;
let token = '';
let startMs = 0;
let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

before(async () => {
  h = buildHostileRoot(path.join(tmp, 'runs'), { liveEveryMs: 100 });
  const t0 = Date.now();
  child = spawn(process.execPath, ['--import', 'tsx', CHILD, h.root], { stdio: ['ignore', 'pipe', 'pipe'] });
  exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no URL within ${START_BOUND_MS} ms; stdout ${out} stderr ${err}`)),
      START_BOUND_MS,
    );
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /(http:\/\/127\.0\.0\.1:(\d+)\/\?token=([\w-]+))/.exec(out);
      if (m) {
        clearTimeout(timer);
        port = Number(m[2]);
        token = m[3];
        startMs = Date.now() - t0;
        resolve();
      }
    });
    void exited.then(() => reject(new Error(`the dashboard exited: ${err}`)));
  });
});

after(() => {
  h?.stop();
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

async function listed(): Promise<ListedRun[]> {
  const r = await get(port, `/api/runs?token=${token}`);
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { runs: ListedRun[] }).runs;
}

test('starts within the bound and lists every run, good and bad', async () => {
  assert.ok(startMs < START_BOUND_MS, `started in ${startMs} ms`);
  const ids = (await listed()).map((r) => r.runId).sort();
  assert.deepEqual(ids, [h.good.completed, h.good.live, ...Object.keys(h.bad)].sort());
});

test('the good runs are served: the completed one whole, the live one followed', async () => {
  const runs = await listed();
  const byId = new Map(runs.map((r) => [r.runId, r]));
  for (const id of [h.good.completed, h.good.live]) assert.equal(byId.get(id)?.problem, null, `${id} is good`);

  const ws = await openSocket(port, `?token=${token}&run=${byId.get(h.good.completed)!.key}`);
  const box = inbox(ws);
  ws.send(JSON.stringify({ type: 'ready', width: 800 }));
  const snap = await box.next((m) => m.type === 'snapshot');
  assert.ok(snap.type === 'snapshot');
  assert.equal(snap.runs[0].totalStepRows, h.completedSteps);
  assert.equal(snap.runs[0].header.status, 'completed');
  ws.close();

  const live = await openSocket(port, `?token=${token}&run=${byId.get(h.good.live)!.key}`);
  const lbox = inbox(live);
  live.send(JSON.stringify({ type: 'ready', width: 800 }));
  const first = await lbox.next((m) => m.type === 'snapshot');
  assert.ok(first.type === 'snapshot');
  const last = first.runs[0].steps.steps.at(-1) ?? 0;
  await lbox.next(
    (m) =>
      (m.type === 'append' && (m.steps?.steps.at(-1) ?? 0) > last + 2) ||
      (m.type === 'snapshot' && (m.runs[0].steps.steps.at(-1) ?? 0) > last + 2),
  );
  live.close();
});

test('each bad run is reported as bad: in the list, and as a banner in a tab that still opens', async () => {
  const runs = await listed();
  const problems: Record<string, string> = {};
  for (const r of runs) {
    if (!(r.runId in h.bad)) continue;
    const ws = await openSocket(port, `?token=${token}&run=${r.key}`);
    const box = inbox(ws);
    ws.send(JSON.stringify({ type: 'ready', width: 800 }));
    const snap = await box.next((m) => m.type === 'snapshot');
    assert.ok(snap.type === 'snapshot', `${r.runId}: a snapshot`);
    const header = snap.runs[0]?.header;
    const tt = header?.error?.traceTail;
    assert.ok(tt === undefined || tt === null || typeof tt === 'string', `${r.runId}: traceTail ${typeof tt}`);
    assert.ok(header === undefined || typeof (header.bestValAcc ?? 0) === 'number', `${r.runId}: bestValAcc`);
    const banner = await box.next(
      (m: HostMessage) => m.type === 'status' && (m.level === 'error' || m.level === 'warning'),
    );
    assert.ok(banner.type === 'status' && banner.message.length > 0);
    ws.close();
  }
  for (const r of await listed()) {
    if (r.runId in h.bad) {
      assert.equal(typeof r.problem, 'string', `${r.runId} (${h.bad[r.runId]}) is listed as bad`);
      problems[r.runId] = r.problem!;
    }
  }
  assert.deepEqual(Object.keys(problems).sort(), Object.keys(h.bad).sort());
});

test('one SIGTERM ends it', async () => {
  child.kill('SIGTERM');
  const res = await Promise.race([
    exited,
    new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 5000)),
  ]);
  assert.notEqual(res, 'timeout', 'still running 5 s after one SIGTERM');
  assert.deepEqual(res, { code: 0, signal: null });
});
