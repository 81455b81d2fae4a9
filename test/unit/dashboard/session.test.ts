// DashboardSession: what the UI receives and when (ready, hidden/visible, batching, zoom, resize,
// compare, resume), and that invalid UI messages change nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RunSeriesStore } from '../../../src/core/dashboard/seriesStore';
import { DashboardSession } from '../../../src/core/dashboard/session';
import type { HostMessage } from '../../../src/shared/dashboardProtocol';
import type { RunEvent } from '../../../src/shared/eventsProtocol';
import { EventMaker, recorded } from '../fixtures/dashboard/events';

type Snapshot = Extract<HostMessage, { type: 'snapshot' }>;
type Append = Extract<HostMessage, { type: 'append' }>;

function session(opts: { mode?: 'single' | 'compare'; appendIntervalMs?: number } = {}) {
  const posted: HostMessage[] = [];
  const invalid: string[] = [];
  const s = new DashboardSession({
    mode: opts.mode ?? 'single',
    post: (m) => posted.push(m),
    appendIntervalMs: opts.appendIntervalMs ?? 0,
    onInvalid: (e) => invalid.push(e),
  });
  return { s, posted, invalid, last: () => posted[posted.length - 1] };
}

test('nothing is posted before ready; ready is answered with a snapshot of everything', () => {
  const { s, posted } = session();
  s.addRun('r1', { name: 'burst', target: 'This machine' });
  s.ingest('r1', recorded('amp-startup-burst'));
  assert.equal(posted.length, 0);
  assert.equal(s.receive({ type: 'ready', width: 800 }), true);
  assert.equal(posted.length, 1);
  const snap = posted[0] as Snapshot;
  assert.equal(snap.type, 'snapshot');
  assert.equal(snap.mode, 'single');
  assert.equal(snap.runs.length, 1);
  const run = snap.runs[0];
  assert.equal(run.header.key, 'r1');
  assert.equal(run.header.status, 'completed');
  assert.equal(run.steps.steps.length, 36);
  assert.equal(run.totalStepRows, 36);
  assert.equal(run.downsampled, false);
  assert.equal(run.evals.steps.length, 4);
  assert.equal(run.amp.diagnosis[0].code, 'startup_burst');
  assert.deepEqual(snap.range, { min: null, max: null });
  assert.equal(snap.revision, 1);
  assert.equal(JSON.stringify(snap).includes('/tmp/'), false, 'no path of the machine reaches the UI');
});

test('live events become appends of the new rows only, with header and AMP health, revision rising', () => {
  const { s, posted } = session();
  const events = recorded('amp-startup-burst');
  s.addRun('r1', { name: 'burst', target: 'This machine' });
  s.ingest('r1', events.slice(0, 10));
  s.receive({ type: 'ready', width: 800 });
  const newSteps = events
    .slice(10, 16)
    .filter((e) => e.type === 'step')
    .map((e) => (e as { step: number }).step);
  assert.ok(newSteps.length >= 2);
  s.ingest('r1', events.slice(10, 16));
  const a = posted[1] as Append;
  assert.equal(a.type, 'append');
  assert.equal(a.key, 'r1');
  assert.deepEqual(a.steps?.steps, newSteps);
  assert.equal((posted[0] as Snapshot).runs[0].steps.steps.at(-1), newSteps[0] - 1, 'no row twice, none missing');
  assert.equal(a.header.step, newSteps.at(-1));
  assert.ok(a.revision > (posted[0] as Snapshot).revision);
  assert.equal(a.amp.overflowsTotal, 8);
  // replaying events already sent posts nothing
  const n = posted.length;
  s.ingest('r1', events.slice(0, 14));
  assert.equal(posted.length, n);
});

test('appends are batched: many ingests inside the interval become one append', async () => {
  const { s, posted } = session({ appendIntervalMs: 20 });
  const m = new EventMaker();
  s.addRun('r1', { name: 'r', target: 't' });
  s.ingest('r1', [m.started()]);
  s.receive({ type: 'ready', width: 500 });
  assert.equal(posted.length, 1);
  const appended = new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (posted.length > 1) {
        clearInterval(check);
        resolve();
      }
    }, 5);
  });
  for (let i = 1; i <= 50; i++) s.ingest('r1', [m.step(i)]);
  assert.equal(posted.length, 1, 'nothing until the interval passes');
  await appended;
  assert.equal(posted.length, 2);
  assert.deepEqual(
    (posted[1] as Append).steps?.steps,
    Array.from({ length: 50 }, (_, i) => i + 1),
  );
  s.dispose();
});

test('hidden: nothing is posted; shown again: one snapshot with everything that arrived meanwhile', () => {
  const { s, posted } = session();
  const m = new EventMaker();
  s.addRun('r1', { name: 'r', target: 't' });
  s.ingest('r1', [m.started(), m.step(1)]);
  s.receive({ type: 'ready', width: 500 });
  s.setVisible(false);
  const n = posted.length;
  for (let i = 2; i <= 30; i++) s.ingest('r1', [m.step(i)]);
  s.status('r1', 'warning', 'reconnecting');
  s.receive({ type: 'zoom', min: 1, max: 10, width: 500 });
  assert.equal(posted.length, n, 'nothing posted while hidden');
  s.setVisible(true);
  const snap = posted[n] as Snapshot;
  assert.equal(snap.type, 'snapshot');
  assert.deepEqual(snap.range, { min: 1, max: 10 }, 'the zoom made while hidden is kept');
  assert.deepEqual(
    snap.runs[0].steps.steps,
    Array.from({ length: 10 }, (_, i) => i + 1),
  );
  assert.equal(snap.runs[0].totalStepRows, 30);
  assert.deepEqual(
    posted[n + 1],
    { type: 'status', key: 'r1', level: 'warning', message: 'reconnecting' },
    'banners follow the snapshot',
  );
  // a webview that reloads on show sends ready again: another full snapshot
  s.receive({ type: 'ready', width: 500 });
  assert.equal(posted.filter((p) => p.type === 'snapshot').length, 3);
});

test('a UI that reloads when shown (a VS Code webview): the snapshot waits for its new ready', () => {
  const posted: HostMessage[] = [];
  const s = new DashboardSession({
    mode: 'single',
    post: (m) => posted.push(m),
    appendIntervalMs: 0,
    uiReloadsWhenShown: true,
  });
  const m = new EventMaker();
  s.addRun('r1', { name: 'r', target: 't' });
  s.ingest('r1', [m.started(), m.step(1)]);
  s.receive({ type: 'ready', width: 500 });
  s.setVisible(false);
  s.ingest('r1', [m.step(2)]);
  s.setVisible(true);
  s.ingest('r1', [m.step(3)]);
  assert.deepEqual(
    posted.map((p) => p.type),
    ['snapshot'],
    'nothing into a page that is still loading',
  );
  s.receive({ type: 'ready', width: 500 });
  assert.deepEqual(
    posted.map((p) => p.type),
    ['snapshot', 'snapshot'],
  );
  assert.deepEqual((posted[1] as Snapshot).runs[0].steps.steps, [1, 2, 3]);
});

const until = async (what: string, cond: () => boolean) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), `timed out waiting for ${what}`);
};

test('zoom answers with a refined snapshot of the range; reset with nulls returns the downsampled whole', async () => {
  const { s, posted } = session();
  const m = new EventMaker();
  s.addRun('r1', { name: 'r', target: 't' });
  const ev: RunEvent[] = [m.started({ totalSteps: 20_000 })];
  for (let i = 1; i <= 20_000; i++) ev.push(m.step(i, { loss: Math.cos(i) }));
  s.ingest('r1', ev);
  s.receive({ type: 'ready', width: 200 });
  const whole = (posted[0] as Snapshot).runs[0];
  assert.ok(whole.downsampled);
  assert.ok(whole.steps.steps.length < 20_000 / 4);
  s.receive({ type: 'zoom', min: 1000, max: 1300, width: 200 });
  const zoomed = (posted[1] as Snapshot).runs[0];
  assert.equal(zoomed.downsampled, false);
  assert.equal(zoomed.steps.steps.length, 301);
  assert.equal(zoomed.totalStepRows, 20_000);
  s.receive({ type: 'zoom', min: null, max: null, width: 200 });
  await until('the reset snapshot', () => posted.length === 3);
  assert.equal((posted[2] as Snapshot).runs[0].steps.steps.length, whole.steps.steps.length);
  s.dispose();
});

test('a flood of zooms costs one snapshot per gap, and the last range wins', async () => {
  const { s, posted } = session();
  const m = new EventMaker();
  s.addRun('r1', { name: 'r', target: 't' });
  s.ingest('r1', [m.started(), ...Array.from({ length: 1000 }, (_, i) => m.step(i + 1))]);
  s.receive({ type: 'ready', width: 300 });
  for (let i = 1; i <= 200; i++) s.receive({ type: 'zoom', min: i, max: i + 100, width: 300 });
  assert.equal(posted.length, 2, 'the ready snapshot and the first zoom, at once');
  await until('the deferred snapshot', () => posted.length === 3);
  assert.deepEqual((posted[2] as Snapshot).range, { min: 200, max: 300 });
  s.dispose();
});

test('resize re-snapshots only when the downsampling changes', () => {
  const { s, posted } = session();
  const m = new EventMaker();
  s.addRun('r1', { name: 'r', target: 't' });
  s.ingest('r1', [m.started(), ...Array.from({ length: 100 }, (_, i) => m.step(i + 1))]);
  s.receive({ type: 'ready', width: 400 });
  s.receive({ type: 'resize', width: 300 });
  assert.equal(posted.length, 1, '100 rows fit either width');
  s.ingest(
    'r1',
    Array.from({ length: 2000 }, (_, i) => m.step(i + 101)),
  );
  const n = posted.length;
  s.receive({ type: 'resize', width: 200 });
  assert.equal(posted[n].type, 'snapshot');
  assert.ok((posted[n] as Snapshot).runs[0].downsampled);
});

test('compare mode: one snapshot with every run, appends keyed by run; single mode refuses a second run', () => {
  const { s, posted } = session({ mode: 'compare' });
  const a = new EventMaker();
  const b = new EventMaker();
  s.addRun('a', { name: 'run A', target: 'This machine' });
  s.addRun('b', { name: 'run B', target: 'ssh:box' });
  s.ingest('a', [a.started(), a.step(1), a.step(2)]);
  s.ingest('b', [b.started({ amp: { level: 'O0', loss_scale: 'none' } }), b.step(1, { loss_scale: null })]);
  s.receive({ type: 'ready', width: 600 });
  const snap = posted[0] as Snapshot;
  assert.equal(snap.mode, 'compare');
  assert.deepEqual(
    snap.runs.map((r) => [r.header.name, r.header.target, r.steps.steps.length]),
    [
      ['run A', 'This machine', 2],
      ['run B', 'ssh:box', 1],
    ],
  );
  s.ingest('b', [b.step(2, { loss_scale: null })]);
  assert.equal((posted[1] as Append).key, 'b');
  assert.deepEqual((posted[1] as Append).steps?.steps, [2]);
  // a run added to an open compare dashboard: everything again
  s.addRun('c', { name: 'run C', target: 't' });
  assert.equal((posted[2] as Snapshot).runs.length, 3);
  assert.throws(() => s.ingest('nope', []), /no run "nope" in this dashboard: addRun it first/);

  const single = session();
  single.s.addRun('a', { name: 'A', target: 't' });
  assert.throws(() => single.s.addRun('b', { name: 'B', target: 't' }), /open a compare dashboard/);
});

test('a resume that rewrites steps already sent makes the next update a snapshot', () => {
  const { s, posted } = session();
  const m = new EventMaker();
  s.addRun('r1', { name: 'r', target: 't' });
  s.ingest('r1', [m.started(), ...[1, 2, 3, 4, 5].map((i) => m.step(i))]);
  s.receive({ type: 'ready', width: 500 });
  s.ingest('r1', [m.started(), m.step(4, { loss: 9 })]);
  const snap = posted[posted.length - 1] as Snapshot;
  assert.equal(snap.type, 'snapshot');
  assert.deepEqual(snap.runs[0].steps.steps, [1, 2, 3, 4]);
  assert.equal(snap.runs[0].steps.loss[3], 9);
});

test('transport signals reach the header (lost, reconnecting)', () => {
  const { s, last } = session();
  const m = new EventMaker();
  s.addRun('r1', { name: 'r', target: 't' });
  s.ingest('r1', [m.started(), m.step(1)]);
  s.receive({ type: 'ready', width: 500 });
  s.signal('r1', { kind: 'dropped' });
  assert.equal((last() as Append).header.phase, 'reconnecting');
  s.signal('r1', { kind: 'lost' });
  assert.equal((last() as Append).header.phase, 'lost');
});

test('invalid UI messages are refused, reported, and change nothing; export goes to its handler or is declined', () => {
  const { s, posted, invalid } = session();
  s.addRun('r1', { name: 'r', target: 't' });
  assert.equal(s.receive({ type: 'ready', width: 'wide' }), false);
  assert.equal(s.receive({ type: 'openFile', path: '/etc/passwd' }), false);
  assert.equal(posted.length, 0, 'an invalid ready is not a ready');
  assert.equal(invalid.length, 2);
  assert.match(invalid[1], /unknown message type "openFile"/);
  s.receive({ type: 'ready', width: 500 });
  s.receive({ type: 'export', format: 'csv', suggestedName: 'x.csv', data: 'a,b' });
  assert.deepEqual(posted[posted.length - 1], {
    type: 'status',
    key: null,
    level: 'info',
    message: 'Export is not available here: the browser saves the file itself.',
  });

  const exported: unknown[] = [];
  const withExport = new DashboardSession({ mode: 'single', post: () => {}, onExport: (m) => exported.push(m) });
  assert.equal(withExport.receive({ type: 'export', format: 'csv', suggestedName: 'loss', data: 'step\n1\n' }), true);
  assert.deepEqual(exported, [{ type: 'export', format: 'csv', suggestedName: 'loss.csv', data: 'step\n1\n' }]);
  assert.equal(withExport.receive({ type: 'export', format: 'csv', suggestedName: '../x', data: '' }), false);
  assert.equal(exported.length, 1);
});

test('after dispose nothing is posted', () => {
  const { s, posted } = session({ appendIntervalMs: 50 });
  const m = new EventMaker();
  s.addRun('r1', { name: 'r', target: 't' });
  s.receive({ type: 'ready', width: 500 });
  s.ingest('r1', [m.started(), m.step(1)]);
  s.dispose();
  s.flush();
  assert.equal(posted.length, 1);
  assert.equal(s.receive({ type: 'ready', width: 500 }), false);
});

test('one shared store for several sessions (browser tabs): ingested once, each tab gets its own appends', () => {
  const store = new RunSeriesStore('r', { name: 'shared', target: 't' });
  const a = session();
  const b = session();
  const m = new EventMaker();
  store.ingest([m.started(), m.step(1), m.step(2)]);
  a.s.addRun('r', { name: 'shared', target: 't' }, store);
  b.s.addRun('r', { name: 'shared', target: 't' }, store);
  a.s.receive({ type: 'ready', width: 500 });
  store.ingest([m.step(3)]);
  a.s.touched('r');
  b.s.touched('r');
  b.s.receive({ type: 'ready', width: 500 });
  assert.deepEqual(
    a.posted.map((p) => p.type),
    ['snapshot', 'append'],
  );
  assert.deepEqual((a.posted[1] as Append).steps?.steps, [3]);
  assert.deepEqual((b.posted[0] as Snapshot).runs[0].steps.steps, [1, 2, 3]);
  assert.equal(store.steps.length, 3, 'one copy of the series');
});
