// The browser dashboard's server: what it refuses (no token, wrong token, other origins and hosts,
// anything but GET), what it serves, and that a tab's socket gets the run's snapshot and then the
// lines appended to events.jsonl. Real HTTP and WebSocket on 127.0.0.1; the runs are small recorded
// event logs written into a temp folder (the browser tests use real live runs).
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import type { HostMessage } from '../../../src/shared/dashboardProtocol';
import { DashboardServerError, startDashboardServer, type DashboardServer } from '../../../src/core/dashboard/server';

const T0 = 1796204881;

function started(seq: number, name: string, classes: string[]): object {
  return {
    v: 1,
    seq,
    t: T0,
    type: 'run_started',
    run_id: name,
    spec: { name, model: { backbone: 'resnet18' }, train: { epochs: 2 } },
    classes,
    num_train: 64,
    num_val: 8,
    steps_per_epoch: 3,
    total_steps: 6,
    versions: {},
    device: { target: 'CPU' },
    global_batch: 16,
    amp: { level: 'O2', loss_scale: 'dynamic' },
    resumed_from: null,
  };
}

function step(seq: number, n: number, overflow = false): object {
  return {
    v: 1,
    seq,
    t: T0 + n,
    type: 'step',
    epoch: Math.ceil(n / 3),
    step: n,
    loss: 1.5 - n * 0.1,
    lr: 0.01,
    loss_scale: 1024,
    overflow,
    skipped: overflow,
    step_ms: 300,
    data_ms: 10,
    img_per_s: 53,
  };
}

function lines(events: object[]): string {
  return events.map((e) => JSON.stringify(e) + '\n').join('');
}

function writeRun(dir: string, name: string, events: object[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'spec.json'), JSON.stringify({ name, model: { backbone: 'resnet18' } }));
  writeFileSync(
    path.join(dir, 'status.json'),
    JSON.stringify({ run_id: path.basename(dir), state: 'running', host: 'testhost', started_at: T0 }),
  );
  writeFileSync(path.join(dir, 'events.jsonl'), lines(events));
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(
  srv: DashboardServer,
  pathAndQuery: string,
  opts: { method?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: srv.port, path: pathAndQuery, method: opts.method ?? 'GET', headers: opts.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Opens a socket; resolves with it once open, or rejects with the HTTP status that refused it. */
function openSocket(
  srv: DashboardServer,
  query: string,
  origin: string | null = `http://127.0.0.1:${srv.port}`,
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${srv.port}/ws${query}`, origin === null ? {} : { origin });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Collects messages; `next(pred)` waits for the first (past or future) one that matches. */
function inbox(ws: WebSocket) {
  const got: HostMessage[] = [];
  const waiters: { pred: (m: HostMessage) => boolean; resolve: (m: HostMessage) => void }[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as HostMessage;
    got.push(m);
    for (const w of waiters.splice(0)) {
      if (w.pred(m)) w.resolve(m);
      else waiters.push(w);
    }
  });
  return {
    got,
    next(pred: (m: HostMessage) => boolean, timeoutMs = 5000): Promise<HostMessage> {
      const seen = got.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching message; got ${got.map((m) => m.type).join(',')}`)),
          timeoutMs,
        );
        waiters.push({ pred, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      });
    },
  };
}

const tmp = mkdtempSync(path.join(tmpdir(), 'dash-server-'));
const assets = path.join(tmp, 'assets');
const root = path.join(tmp, 'runs');
const runA = path.join(root, '20261202-100000-alpha-aaaa');
const runB = path.join(root, '20261202-110000-beta-bbbb');

before(() => {
  mkdirSync(assets, { recursive: true });
  writeFileSync(path.join(assets, 'dashboard.js'), 'console.log("ui")');
  writeFileSync(path.join(assets, 'dashboard.css'), 'body{}');
  writeRun(runA, 'alpha', [started(1, 'alpha', ['cat', '<img src=x onerror=alert(1)>']), step(2, 1, true), step(3, 2)]);
  writeRun(runB, 'beta', [started(1, 'beta', ['a', 'b']), step(2, 1)]);
});

after(() => rmSync(tmp, { recursive: true, force: true }));

describe('dashboard server, one run', () => {
  let srv: DashboardServer;
  before(async () => {
    srv = await startDashboardServer({ path: runA, assetsDir: assets, pollMs: 20 });
  });
  after(() => srv.close());

  test('binds 127.0.0.1 and prints a URL with a long random token', () => {
    assert.equal(srv.host, '127.0.0.1');
    assert.equal(srv.kind, 'run');
    assert.match(srv.url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32}$/);
  });

  test('every HTTP request needs the token', async () => {
    for (const p of ['/', '/dashboard.js', '/dashboard.css', '/api/runs', '/favicon.ico']) {
      assert.equal((await request(srv, p)).status, 403, `${p} without token`);
      assert.equal(
        (await request(srv, `${p}?token=${'x'.repeat(srv.token.length)}`)).status,
        403,
        `${p} with a wrong token`,
      );
    }
    const ok = await request(srv, `/dashboard.js?token=${srv.token}`);
    assert.equal(ok.status, 200);
    assert.equal(ok.body, 'console.log("ui")');
  });

  test('the page has a strict CSP whose nonce is the one on its script, and no run path', async () => {
    const page = await request(srv, `/?token=${srv.token}`);
    assert.equal(page.status, 200);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce, csp);
    assert.ok(page.body.includes(`<script nonce="${nonce}" src="/dashboard.js?token=${srv.token}">`));
    assert.ok(!page.body.includes(tmp), 'no file path in the page');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.notEqual(
      (await request(srv, `/?token=${srv.token}`)).headers['content-security-policy'],
      csp,
      'a fresh nonce per page',
    );
  });

  test('read-only: anything but GET or HEAD is 405', async () => {
    for (const method of ['POST', 'PUT', 'DELETE'])
      assert.equal((await request(srv, `/?token=${srv.token}`, { method })).status, 405);
    assert.equal((await request(srv, `/?token=${srv.token}`, { method: 'HEAD' })).status, 200);
  });

  test('another origin or a rebound host name is refused even with the token', async () => {
    const evil = await request(srv, `/api/runs?token=${srv.token}`, { headers: { origin: 'http://evil.example' } });
    assert.equal(evil.status, 403);
    const rebound = await request(srv, `/?token=${srv.token}`, { headers: { host: `evil.example:${srv.port}` } });
    assert.equal(rebound.status, 403);
    const local = await request(srv, `/?token=${srv.token}`, { headers: { host: `localhost:${srv.port}` } });
    assert.equal(local.status, 200);
  });

  test('the socket refuses no token, a wrong token, a foreign origin and no origin', async () => {
    await assert.rejects(openSocket(srv, ''), /refused 403/);
    await assert.rejects(openSocket(srv, `?token=${'y'.repeat(srv.token.length)}`), /refused 403/);
    await assert.rejects(openSocket(srv, `?token=${srv.token}`, 'http://evil.example'), /refused 403/);
    await assert.rejects(openSocket(srv, `?token=${srv.token}`, null), /refused 403/);
  });

  test('a tab gets a snapshot on ready, then the lines appended to events.jsonl', async () => {
    const ws = await openSocket(srv, `?token=${srv.token}`);
    const box = inbox(ws);
    ws.send('this is not JSON'); // ignored, not fatal
    ws.send(JSON.stringify({ type: 'launch', cmd: 'rm -rf /' })); // not a UI message: refused
    ws.send(JSON.stringify({ type: 'ready', width: 600 }));
    const snap = await box.next((m) => m.type === 'snapshot');
    assert.equal(snap.type, 'snapshot');
    if (snap.type !== 'snapshot') return;
    assert.equal(snap.mode, 'single');
    assert.equal(snap.runs.length, 1);
    const run = snap.runs[0];
    assert.equal(run.header.name, 'alpha');
    assert.deepEqual(run.header.classes, ['cat', '<img src=x onerror=alert(1)>']);
    assert.deepEqual(run.steps.steps, [1, 2]);
    assert.deepEqual(run.steps.overflow, [1, 0]);
    assert.ok(!JSON.stringify(snap).includes(tmp), 'no file path reaches the UI');

    appendFileSync(path.join(runA, 'events.jsonl'), lines([step(4, 3), step(5, 4)]));
    const seen = new Set<number>();
    await box.next((m) => {
      if (m.type === 'append') m.steps?.steps.forEach((s) => seen.add(s));
      if (m.type === 'snapshot') m.runs[0].steps.steps.forEach((s) => seen.add(s));
      return seen.has(3) && seen.has(4);
    });

    // A second tab joins while the first one follows: it reads the history itself, once.
    const ws2 = await openSocket(srv, `?token=${srv.token}`);
    const box2 = inbox(ws2);
    ws2.send(JSON.stringify({ type: 'ready', width: 600 }));
    const snap2 = await box2.next((m) => m.type === 'snapshot');
    assert.ok(snap2.type === 'snapshot');
    assert.deepEqual(snap2.runs[0].steps.steps, [1, 2, 3, 4]);
    appendFileSync(path.join(runA, 'events.jsonl'), lines([step(6, 5)]));
    for (const b of [box, box2]) {
      await b.next(
        (m) =>
          (m.type === 'append' && m.steps?.steps.includes(5)) ||
          (m.type === 'snapshot' && m.runs[0].steps.steps.includes(5)) ||
          false,
      );
    }
    const rows2 = new Set<number>();
    for (const m of box2.got) {
      if (m.type === 'snapshot') rows2.clear();
      if (m.type === 'snapshot') m.runs[0].steps.steps.forEach((x) => rows2.add(x));
      if (m.type === 'append') {
        for (const x of m.steps?.steps ?? []) {
          assert.ok(!rows2.has(x), `step ${x} sent twice`);
          rows2.add(x);
        }
      }
    }
    assert.deepEqual([...rows2], [1, 2, 3, 4, 5]);
    ws.close();
    ws2.close();
  });
});

describe('dashboard server, a runs root', () => {
  let srv: DashboardServer;
  before(async () => {
    srv = await startDashboardServer({ path: root, assetsDir: assets, pollMs: 20, rescanMs: 50 });
  });
  after(() => srv.close());

  test('lists runs by opaque key, newest first, without their paths', async () => {
    const r = await request(srv, `/api/runs?token=${srv.token}`);
    assert.equal(r.status, 200);
    const body = JSON.parse(r.body) as { kind: string; runs: { key: string; name: string; runId: string }[] };
    assert.equal(body.kind, 'root');
    assert.deepEqual(
      body.runs.map((x) => x.name),
      ['beta', 'alpha'],
    );
    assert.ok(body.runs.every((x) => /^r\d+$/.test(x.key)));
    assert.ok(!r.body.includes(tmp));
  });

  test('compare=KEY,KEY overlays both runs; the default is the newest run', async () => {
    const keys = srv.runs().map((r) => r.key);
    const ws = await openSocket(srv, `?token=${srv.token}&compare=${keys.join(',')}`);
    const box = inbox(ws);
    ws.send(JSON.stringify({ type: 'ready', width: 500 }));
    const snap = await box.next((m) => m.type === 'snapshot');
    assert.ok(snap.type === 'snapshot' && snap.mode === 'compare');
    assert.deepEqual(snap.runs.map((r) => r.header.name).sort(), ['alpha', 'beta']);
    ws.close();

    const ws2 = await openSocket(srv, `?token=${srv.token}&run=../../etc`);
    const box2 = inbox(ws2);
    ws2.send(JSON.stringify({ type: 'ready', width: 500 }));
    const snap2 = await box2.next((m) => m.type === 'snapshot');
    assert.ok(snap2.type === 'snapshot');
    assert.deepEqual(
      snap2.runs.map((r) => r.header.name),
      ['beta'],
      'an unknown key falls back to the newest run',
    );
    ws2.close();
  });

  test('a run that appears later is listed', async () => {
    writeRun(path.join(root, '20261202-120000-gamma-cccc'), 'gamma', [started(1, 'gamma', ['a', 'b'])]);
    const deadline = Date.now() + 5000;
    while (!srv.runs().some((r) => r.name === 'gamma')) {
      assert.ok(Date.now() < deadline, 'gamma listed within 5 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  });
});

describe('dashboard server, bad input', () => {
  test('a folder that does not exist is a clear error', async () => {
    await assert.rejects(startDashboardServer({ path: path.join(tmp, 'nope'), assetsDir: assets }), (e: unknown) => {
      assert.ok(e instanceof DashboardServerError);
      assert.match(e.message, /no such folder; pass a run directory/);
      return true;
    });
  });
});
