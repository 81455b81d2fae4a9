// The browser dashboard's server under requests it must survive: request targets that are not
// URLs (no token needed to send one), many tabs on one run, a tab that floods `ready` and never
// reads, and more sockets than it takes. No timing assertions: reads, queued bytes and memory.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type WebSocket from 'ws';
import { startDashboardServer, type DashboardServer } from '../../../src/core/dashboard/server';
import type { RunEvent } from '../../../src/shared/eventsProtocol';
import { get, inbox, openSocket, until } from '../../support/dashboardClient';
import { EventMaker } from '../fixtures/dashboard/events';

const tmp = mkdtempSync(path.join(tmpdir(), 'dash-limits-'));
const assets = path.join(tmp, 'assets');
const runDir = path.join(tmp, 'run-20261203-big');
const STEPS = 2000;

before(() => {
  mkdirSync(assets, { recursive: true });
  writeFileSync(path.join(assets, 'dashboard.js'), 'console.log("ui")');
  writeFileSync(path.join(assets, 'dashboard.css'), 'body{}');
  mkdirSync(runDir, { recursive: true });
  const m = new EventMaker();
  const ev: RunEvent[] = [m.started({ totalSteps: STEPS })];
  for (let i = 1; i <= STEPS; i++) ev.push(m.step(i, { loss: Math.cos(i) / 3 + 1, overflow: i % 97 === 0 }));
  writeFileSync(path.join(runDir, 'events.jsonl'), ev.map((e) => JSON.stringify(e) + '\n').join(''));
  writeFileSync(path.join(runDir, 'status.json'), JSON.stringify({ run_id: 'big', state: 'completed' }));
});

after(() => rmSync(tmp, { recursive: true, force: true }));

/** Writes `request` on a raw socket and resolves with everything the server answered until it closed. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let got = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (got += d));
    sock.on('error', (e) => (got ? resolve(got) : reject(e)));
    sock.on('close', () => resolve(got));
    sock.setTimeout(5000, () => sock.destroy());
    sock.write(request);
  });
}

describe('request targets that are not URLs', () => {
  let srv: DashboardServer;
  before(async () => {
    srv = await startDashboardServer({ path: runDir, assetsDir: assets, pollMs: 50 });
  });
  after(() => srv.close());

  const targets = ['//%5B', '//x:99999', '//a%20b', 'http://[::1'];
  test('plain GET and WebSocket upgrade: 400, and the server keeps serving', async () => {
    const host = `Host: 127.0.0.1:${srv.port}\r\n`;
    for (const t of targets) {
      const plain = await raw(srv.port, `GET ${t} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
      assert.match(plain, /^HTTP\/1\.1 400 /, `GET ${t}: ${plain.slice(0, 80)}`);
      const upgrade = await raw(
        srv.port,
        `GET ${t} HTTP/1.1\r\n${host}Connection: Upgrade\r\nUpgrade: websocket\r\n` +
          `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n` +
          `Origin: http://127.0.0.1:${srv.port}\r\n\r\n`,
      );
      assert.match(upgrade, /^HTTP\/1\.1 400 /, `upgrade ${t}: ${upgrade.slice(0, 80)}`);
    }
    const ok = await get(srv.port, `/api/runs?token=${srv.token}`);
    assert.equal(ok.status, 200);
    const ws = await openSocket(srv.port, `?token=${srv.token}`);
    const box = inbox(ws);
    ws.send(JSON.stringify({ type: 'ready', width: 400 }));
    await box.next((m) => m.type === 'snapshot');
    ws.close();
  });
});

describe('resources a token holder can take', () => {
  let srv: DashboardServer;
  before(async () => {
    srv = await startDashboardServer({ path: runDir, assetsDir: assets, pollMs: 50 });
  });
  after(() => srv.close());

  test('ten tabs on one run: the event log is read once, into one shared series store', async () => {
    const tabs: WebSocket[] = [];
    for (let i = 0; i < 10; i++) {
      const ws = await openSocket(srv.port, `?token=${srv.token}`);
      const box = inbox(ws);
      ws.send(JSON.stringify({ type: 'ready', width: 600 }));
      const snap = await box.next((m) => m.type === 'snapshot');
      assert.ok(snap.type === 'snapshot' && snap.runs[0].totalStepRows === STEPS);
      tabs.push(ws);
    }
    const size = statSync(path.join(runDir, 'events.jsonl')).size;
    const run = srv.stats().runs[0];
    assert.equal(run.tabs, 10);
    assert.equal(run.bytesRead, size, 'each byte of events.jsonl read once');
    assert.equal(run.loads, 1, 'one store, loaded once');
    for (const ws of tabs) ws.close();
    await until('the tabs to close', () => srv.stats().sockets === 0);
  });

  test('a tab that floods `ready` and never reads: queued bytes and memory stay bounded', async () => {
    const ws = await openSocket(srv.port, `?token=${srv.token}`);
    ws.pause(); // never read what the server sends
    const before = process.memoryUsage();
    const ready = JSON.stringify({ type: 'ready', width: 8192 });
    for (let i = 0; i < 3000; i++) ws.send(ready);
    let worst = 0;
    for (let i = 0; i < 30; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const now = process.memoryUsage();
      worst = Math.max(worst, now.heapUsed + now.arrayBuffers - before.heapUsed - before.arrayBuffers);
    }
    assert.ok(worst < 150 * 1024 * 1024, `the server grew by ${(worst / 1048576).toFixed(0)} MB`);
    const stats = srv.stats();
    assert.ok(stats.queuedBytes <= stats.limits.maxQueuedBytesPerTab * stats.sockets, `queued ${stats.queuedBytes}`);
    ws.terminate();
    await until('the flooding tab to close', () => srv.stats().sockets === 0);
  });

  test('the socket cap: the next tab is refused with 1013 and a reason; a freed slot is taken again', async () => {
    const max = 64; // the stated cap (srv.stats().limits.maxTabs, checked below)
    const open: WebSocket[] = [];
    for (let i = 0; i < max; i++) open.push(await openSocket(srv.port, `?token=${srv.token}`));
    const extra = await openSocket(srv.port, `?token=${srv.token}`);
    const closed = await new Promise<{ code: number; reason: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('tab 65 was not refused')), 5000);
      extra.once('close', (code, reason) => (clearTimeout(timer), resolve({ code, reason: reason.toString() })));
    });
    assert.equal(closed.code, 1013);
    assert.match(closed.reason, /too many dashboard tabs \(64\)/);
    open.pop()!.close();
    await until('a slot to free', () => srv.stats().sockets === max - 1);
    const again = await openSocket(srv.port, `?token=${srv.token}`);
    const box = inbox(again);
    again.send(JSON.stringify({ type: 'ready', width: 400 }));
    await box.next((m) => m.type === 'snapshot');
    assert.equal(srv.stats().limits.maxTabs, max);
    for (const ws of [...open, again]) ws.close();
  });
});
