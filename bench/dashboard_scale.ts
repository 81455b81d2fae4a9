// How to run:  node --import tsx bench/dashboard_scale.ts [--steps 1000000] [--width 1200]
//              [--appends 300] [--rows-per-append 10] [--no-browser]
// (the browser part needs the UI bundle, `node esbuild.mjs` -> dist/webview/dashboard.js, and
// Chromium at /usr/bin/chromium or $CHROMIUM)
//
// One million step events (four series: loss, lr, loss scale, images/s; an overflow every 997
// steps) through the host's series store and downsampler, then into the real UI bundle in headless
// Chromium, in the VS Code panel's own HTML shell and CSP (served from 127.0.0.1) with a stand-in
// VS Code API. Prints:
//   host: ingest rate (events/s; target > 100,000), snapshot build time and size at the width;
//   browser: time to first full render of that snapshot, median and p95 main-thread work per live
//   append (target p95 < 16 ms, one frame), and the page's JS heap after the load (target < 150 MB).
// "Work per append" is the main thread's busy time for it: the message handler, plus the whole
// frame that draws it (its animation-frame callbacks, style, layout and paint: from the start of
// its first rAF callback, timed by wrapping requestAnimationFrame before the bundle loads, to a task
// posted from the last one), but not the idle wait for that frame. --bundle PATH measures another build of the UI (e.g. an older one, for a before/after);
// --profile prints a CPU profile and the browser's trace events over the appends.
// --tabs N [--tabs-steps 200000] instead measures the browser dashboard's server (the `dashboard`
// command's, src/core/dashboard/server.ts): one tab, then N tabs at once on one run of that many
// steps; prints the time to every tab's snapshot and the server's memory growth, and each as a
// ratio against one tab (with one shared store per run, N tabs cost about one tab's read).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import WebSocket from 'ws';
import { dashboardShell } from '../src/core/dashboard/html';
import { startDashboardServer } from '../src/core/dashboard/server';
import { DashboardSession } from '../src/core/dashboard/session';
import type { HostMessage } from '../src/shared/dashboardProtocol';
import type { RunEvent } from '../src/shared/eventsProtocol';

const ROOT = path.resolve(__dirname, '..');
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const STEPS = arg('steps', 1_000_000);
const WIDTH = arg('width', 1200);
const APPENDS = arg('appends', 300);
const ROWS_PER_APPEND = arg('rows-per-append', 10);
const BROWSER = !process.argv.includes('--no-browser');
/** --profile: a CPU profile and a timeline trace over the appends; prints where the time went. */
const PROFILE = process.argv.includes('--profile');

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

function makeEvents(from: number, count: number, seq0: number): RunEvent[] {
  const out: RunEvent[] = new Array(count);
  for (let k = 0; k < count; k++) {
    const i = from + k;
    const overflow = i % 997 === 0;
    out[k] = {
      v: 1,
      seq: seq0 + k,
      t: 1_796_200_000 + i * 0.1,
      type: 'step',
      epoch: Math.ceil(i / 10_000),
      step: i,
      loss: 2 * Math.exp(-i / 200_000) + 0.1 * Math.sin(i / 37) + (i % 50_000 === 0 ? 3 : 0),
      lr: 0.01 * 0.5 * (1 + Math.cos((Math.PI * i) / STEPS)),
      loss_scale: overflow ? 32768 : 65536,
      overflow,
      skipped: overflow,
      step_ms: 100 + (i % 13),
      img_per_s: 320 - (i % 29),
    } as RunEvent;
  }
  return out;
}

const TABS = arg('tabs', 0);

/** Opens `n` tabs at once on the server's default run; resolves when each has its snapshot. */
function openTabs(port: number, token: string, n: number): Promise<WebSocket[]> {
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${token}`, { origin: `http://127.0.0.1:${port}` });
          ws.once('open', () => ws.send(JSON.stringify({ type: 'ready', width: WIDTH })));
          ws.on('message', (d) => {
            if ((JSON.parse(String(d)) as HostMessage).type === 'snapshot') resolve(ws);
          });
          ws.once('error', reject);
        }),
    ),
  );
}

async function tabsBench(): Promise<void> {
  const steps = arg('tabs-steps', 200_000);
  const tmp = mkdtempSync(path.join(tmpdir(), 'dash-tabs-'));
  const runDir = path.join(tmp, 'run');
  const assets = path.join(tmp, 'assets');
  mkdirSync(runDir);
  mkdirSync(assets);
  writeFileSync(path.join(assets, 'dashboard.js'), '');
  writeFileSync(path.join(assets, 'dashboard.css'), '');
  const lines: string[] = [];
  for (let from = 1; from <= steps; from += 10_000)
    for (const e of makeEvents(from, Math.min(10_000, steps - from + 1), from)) lines.push(JSON.stringify(e));
  writeFileSync(path.join(runDir, 'events.jsonl'), lines.join('\n') + '\n');
  const mem = () => {
    (globalThis as { gc?: () => void }).gc?.();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const measure = async (n: number) => {
    // a fresh server each time: nothing cached from the previous measurement
    const srv = await startDashboardServer({ path: runDir, assetsDir: assets });
    const m0 = mem();
    const t0 = performance.now();
    const tabs = await openTabs(srv.port, srv.token, n);
    const ms = performance.now() - t0;
    const grew = mem() - m0;
    const reads = srv.stats().runs[0];
    for (const ws of tabs) ws.terminate();
    await srv.close();
    return { ms, grew, loads: reads.loads };
  };
  const one = await measure(1);
  const many = await measure(TABS);
  console.log(
    `server tabs: 1 tab on ${steps} steps: ${one.ms.toFixed(0)} ms, +${mb(one.grew)} MB; ` +
      `${TABS} tabs: ${many.ms.toFixed(0)} ms (ratio ${(many.ms / one.ms).toFixed(2)}), ` +
      `+${mb(many.grew)} MB (ratio ${(many.grew / Math.max(one.grew, 1)).toFixed(2)}), store loads ${many.loads}`,
  );
  rmSync(tmp, { recursive: true, force: true });
}

async function main(): Promise<void> {
  if (TABS > 0) return tabsBench();
  // ---- host ----
  const started = {
    v: 1,
    seq: 1,
    t: 1_796_200_000,
    type: 'run_started',
    run_id: 'bench',
    spec: {
      name: 'bench',
      model: { backbone: 'resnet50' },
      amp: { level: 'O2', loss_scale: 'dynamic' },
      train: { epochs: 100 },
    },
    classes: ['a', 'b'],
    num_train: 320_000,
    num_val: 1000,
    steps_per_epoch: 10_000,
    total_steps: STEPS + APPENDS * ROWS_PER_APPEND,
    versions: {},
    device: {},
    global_batch: 32,
    amp: { level: 'O2', loss_scale: 'dynamic' },
  } as RunEvent;
  const events = makeEvents(1, STEPS, 2); // built before the clock starts: parsing is attach's cost, not the store's
  const posted: HostMessage[] = [];
  const session = new DashboardSession({ mode: 'single', post: (m) => posted.push(m), appendIntervalMs: 0 });
  session.addRun('r0', { name: 'bench', target: 'This machine' });
  session.ingest('r0', [started]);
  const BATCH = 5000;
  const t0 = performance.now();
  for (let i = 0; i < events.length; i += BATCH) session.ingest('r0', events.slice(i, i + BATCH));
  const ingestMs = performance.now() - t0;
  const rate = STEPS / (ingestMs / 1000);
  console.log(
    `host ingest: ${STEPS} step events in ${ingestMs.toFixed(0)} ms = ${Math.round(rate).toLocaleString('en')} events/s (target > 100,000: ratio ${(rate / 100_000).toFixed(1)}x)`,
  );

  const snaps: number[] = [];
  let snapshot: HostMessage | undefined;
  for (let r = 0; r < 5; r++) {
    posted.length = 0;
    const t1 = performance.now();
    session.receive({ type: 'ready', width: WIDTH });
    snaps.push(performance.now() - t1);
    snapshot = posted[0];
  }
  if (snapshot?.type !== 'snapshot') throw new Error('no snapshot');
  const json = JSON.stringify(snapshot);
  const rows = snapshot.runs[0].steps.steps.length;
  console.log(
    `host snapshot: ${rows} rows (from ${STEPS}) at width ${WIDTH}, ${mb(json.length)} MB JSON, build median ${pct(snaps, 50).toFixed(1)} ms (of 5), overflow markers ${snapshot.runs[0].steps.overflow.filter((v) => v).length}/${Math.floor(STEPS / 997)}`,
  );
  const tz = performance.now();
  session.receive({ type: 'zoom', min: 400_000, max: 400_000 + WIDTH, width: WIDTH });
  console.log(`host zoom snapshot (${WIDTH} raw rows of ${STEPS}): ${(performance.now() - tz).toFixed(1)} ms`);
  // back to the whole run (zoom snapshots are at least 50 ms apart: wait for it)
  const before = posted.length;
  session.receive({ type: 'zoom', min: null, max: null, width: WIDTH });
  while (posted.length === before) await new Promise((r) => setTimeout(r, 10));

  // live appends: the session's own append messages
  const appends: HostMessage[] = [];
  const appendHost: number[] = [];
  let seq = STEPS + 2;
  let step = STEPS + 1;
  for (let a = 0; a < APPENDS; a++) {
    const batch = makeEvents(step, ROWS_PER_APPEND, seq);
    step += ROWS_PER_APPEND;
    seq += ROWS_PER_APPEND;
    posted.length = 0;
    const ta = performance.now();
    session.ingest('r0', batch);
    appendHost.push(performance.now() - ta);
    appends.push(...posted);
  }
  console.log(
    `host append: ${APPENDS} appends of ${ROWS_PER_APPEND} rows, build median ${pct(appendHost, 50).toFixed(3)} ms, p95 ${pct(appendHost, 95).toFixed(3)} ms (${appends.filter((m) => m.type === 'snapshot').length} re-snapshots)`,
  );

  if (!BROWSER) return;
  const i = process.argv.indexOf('--bundle');
  const bundle = i > 0 ? path.resolve(process.argv[i + 1]) : path.join(ROOT, 'dist', 'webview', 'dashboard.js');
  if (!existsSync(bundle)) {
    console.log('browser: skipped, dist/webview/dashboard.js is missing (node esbuild.mjs builds it)');
    return;
  }
  await browserPart(bundle, json, appends);
}

/** Serves the VS Code panel's own HTML shell (same CSP) and the built bundle on 127.0.0.1, with a
 * nonce'd stand-in for VS Code's webview API and a timer around animation-frame callbacks. */
async function serveShell(bundle: string): Promise<{ url: string; close: () => void }> {
  const dir = path.dirname(bundle);
  const css = path.join(dir, 'dashboard.css');
  let origin = '';
  const server = http.createServer((req, res) => {
    if (req.url === '/') {
      const nonce = randomBytes(16).toString('base64');
      const html = dashboardShell({
        cspSource: origin,
        scriptUri: `${origin}/dashboard.js`,
        styleUri: existsSync(css) ? `${origin}/dashboard.css` : undefined,
        nonce,
      });
      // Page scripts are strings: tsx would rewrite functions (`performance` to this file's import).
      const standIn = `<script nonce="${nonce}">(() => {
        const fromUi = [];
        let state;
        window.__fromUi = fromUi;
        window.__csp = [];
        document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
        window.acquireVsCodeApi = () => ({ postMessage: (m) => fromUi.push(m), getState: () => state, setState: (s) => (state = s) });
        // The start of each frame's first animation-frame callback (rAF's own timestamp is the
        // frame's scheduled time, in headless Chromium often long before the frame ran).
        window.__frameStart = 0;
        const raf = window.requestAnimationFrame.bind(window);
        window.requestAnimationFrame = (cb) => raf((t) => {
          if (!window.__frameStart) window.__frameStart = performance.now();
          cb(t);
        });
      })()</script>`;
      res.setHeader('content-type', 'text/html');
      res.end(
        html
          .replace('<body>', '<body class="vscode-dark">')
          .replace('<div id="app"></div>', `<div id="app"></div>\n${standIn}`),
      );
    } else if (req.url === '/dashboard.js' || req.url === '/dashboard.css') {
      res.setHeader('content-type', req.url.endsWith('.js') ? 'text/javascript' : 'text/css');
      res.end(readFileSync(path.join(dir, req.url.slice(1))));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { url: `${origin}/`, close: () => server.close() };
}

async function browserPart(bundle: string, snapshotJson: string, appends: HostMessage[]): Promise<void> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox'],
  });
  const shell = await serveShell(bundle);
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(shell.url);
    const ready = await page
      .waitForFunction(`window.__fromUi.some((m) => m.type === 'ready')`, undefined, { timeout: 15_000 })
      .then(
        () => true,
        () => false,
      );
    if (!ready) {
      console.log(
        `browser: the UI bundle never sent 'ready' (errors: ${errors.join('; ') || 'none'}); no browser figures`,
      );
      return;
    }
    // time to first full render: dispatch the snapshot, then wait until two frames have run
    const renderMs = (await page.evaluate(`(async () => {
      const msg = JSON.parse(${JSON.stringify(snapshotJson)});
      const t0 = performance.now();
      window.dispatchEvent(new MessageEvent('message', { data: msg }));
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      return performance.now() - t0;
    })()`)) as number;
    // The handler runs synchronously in dispatchEvent. The UI draws in its own animation-frame
    // callback, queued before ours, so ours runs last in that frame; a task posted from it runs once
    // the frame's style, layout and paint are done.
    await page.evaluate(`window.__measureAppend = async (msg) => {
      const t0 = performance.now();
      window.dispatchEvent(new MessageEvent('message', { data: msg }));
      const handler = performance.now() - t0;
      window.__frameStart = 0;
      const frame = await new Promise((r) => requestAnimationFrame(() => {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => r([performance.now() - window.__frameStart, performance.getEntriesByName('ascend-dashboard-render').at(-1)?.duration ?? 0]);
        ch.port2.postMessage(0);
      }));
      performance.clearMeasures('ascend-dashboard-render');
      return [handler, ...frame];
    }`);
    const perAppend: number[] = [];
    const handlerPart: number[] = [];
    const framePart: number[] = [];
    const renderPart: number[] = [];
    const cdp = await page.context().newCDPSession(page);
    const trace: { name: string; dur?: number; ph: string; cat: string }[] = [];
    let traceDone: Promise<void> | undefined;
    if (PROFILE) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      await cdp.send('Profiler.start');
      cdp.on('Tracing.dataCollected', (e) => trace.push(...(e.value as unknown as typeof trace)));
      traceDone = new Promise((resolve) => cdp.once('Tracing.tracingComplete', () => resolve()));
      await cdp.send('Tracing.start', {
        categories: 'devtools.timeline,v8,blink,cc,disabled-by-default-skia',
        transferMode: 'ReportEvents',
      });
    }
    for (const m of appends) {
      const [handler, frame, render] = (await page.evaluate(`window.__measureAppend(${JSON.stringify(m)})`)) as [
        number,
        number,
        number,
      ];
      renderPart.push(render);
      perAppend.push(handler + frame);
      handlerPart.push(handler);
      framePart.push(frame);
    }
    if (PROFILE) await printProfile(cdp, trace, traceDone!);
    await cdp.send('HeapProfiler.collectGarbage');
    const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
    const points = (await page.evaluate(`document.querySelectorAll('canvas').length`)) as number;
    console.log(
      `browser first render: ${renderMs.toFixed(0)} ms for the ${mb(snapshotJson.length)} MB snapshot (${points} canvases)`,
    );
    const p95 = pct(perAppend, 95);
    console.log(
      `browser per append: median ${pct(perAppend, 50).toFixed(2)} ms, p95 ${p95.toFixed(2)} ms over ${perAppend.length} appends (target p95 < 16 ms: ratio ${(p95 / 16).toFixed(2)})`,
    );
    const slow = perAppend.map((ms, i) => [i, ms]).filter(([, ms]) => ms > 16);
    console.log(
      `browser per append, message handler: median ${pct(handlerPart, 50).toFixed(2)} ms, p95 ${pct(handlerPart, 95).toFixed(2)} ms; its frame (rAF callbacks, style, layout, paint): median ${pct(framePart, 50).toFixed(2)} ms, p95 ${pct(framePart, 95).toFixed(2)} ms; of which the UI's render (its performance.measure): median ${pct(renderPart, 50).toFixed(2)} ms, p95 ${pct(renderPart, 95).toFixed(2)} ms`,
    );
    console.log(
      `browser appends over 16 ms: ${slow.length} (max ${Math.max(...perAppend).toFixed(1)} ms; first at append #${slow
        .slice(0, 8)
        .map(([i]) => i)
        .join(', #')})`,
    );
    console.log(
      `browser JS heap after load and appends: ${mb(heap.usedSize)} MB (target < 150 MB: ratio ${(heap.usedSize / 1024 / 1024 / 150).toFixed(2)})`,
    );
    const csp = (await page.evaluate('window.__csp')) as string[];
    console.log(
      `browser CSP violations under the panel's policy: ${csp.length}${csp.length ? ` (${csp.slice(0, 3).join('; ')})` : ''}`,
    );
    if (errors.length) console.log(`browser page errors: ${errors.slice(0, 3).join(' | ')}`);
  } finally {
    shell.close();
    await browser.close();
  }
}

type CDP = { send(method: string, params?: object): Promise<unknown> };
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Top self time by JS function (CPU profile), and top browser work by trace event name. */
async function printProfile(
  cdp: CDP,
  trace: { name: string; dur?: number; ph: string; cat: string }[],
  traceDone: Promise<void>,
): Promise<void> {
  const { profile } = (await cdp.send('Profiler.stop')) as {
    profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const f = byId.get(id)!.callFrame;
    const key =
      `${f.functionName || '(anonymous)'} ${f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : ''}`.trim();
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`profile: JS self time over the appends (${total.toFixed(0)} ms sampled), top 15:`);
  for (const [k, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15))
    console.log(`  ${ms.toFixed(1).padStart(8)} ms  ${k}`);
  await cdp.send('Tracing.end');
  await traceDone;
  const byName = new Map<string, { ms: number; n: number; max: number }>();
  for (const e of trace) {
    if (e.ph !== 'X' || e.dur === undefined) continue;
    const v = byName.get(e.name) ?? { ms: 0, n: 0, max: 0 };
    v.ms += e.dur / 1000;
    v.n++;
    v.max = Math.max(v.max, e.dur / 1000);
    byName.set(e.name, v);
  }
  console.log('trace: main-thread and compositor events by total time (nested events overlap), top 20:');
  for (const [k, v] of [...byName].sort((a, b) => b[1].ms - a[1].ms).slice(0, 20))
    console.log(
      `  ${v.ms.toFixed(1).padStart(8)} ms  ${String(v.n).padStart(5)}x  max ${v.max.toFixed(1).padStart(6)} ms  ${k}`,
    );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
