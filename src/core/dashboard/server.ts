// The dashboard in a plain browser: `ascend-finetune dashboard <run dir | runs root>`. Serves the
// webview bundle (dist/webview/dashboard.{js,css}) in an HTML shell over HTTP and talks to each tab
// over a WebSocket, one DashboardSession per tab, fed by tailing the runs' events.jsonl.
//
// Security: bound to 127.0.0.1 unless told otherwise; a random token must be on every request and on
// the socket; the Host header (on a loopback bind) and the Origin must name this server, which stops
// DNS rebinding and other pages' scripts; only GET/HEAD; no path ever comes from the client (runs are
// addressed by opaque keys this server hands out); UI messages go through the session's validation.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { JsonlReader } from '../runs/jsonlReader';
import { isRunEvent, type RunEvent } from '../../shared/eventsProtocol';
import type { HostMessage, RunKey } from '../../shared/dashboardProtocol';
import { DashboardSession } from './session';

export interface DashboardServerOptions {
  /** A run directory (holds events.jsonl or status.json) or a runs root (one run per sub-folder). */
  path: string;
  /** Folder with dashboard.js and dashboard.css (the built webview bundle). */
  assetsDir: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** How often a watched events.jsonl is checked for new lines (ms). Default 100. */
  pollMs?: number;
  /** How often a runs root is re-listed for new runs (ms). Default 2000. */
  rescanMs?: number;
}

export interface DashboardRunInfo {
  key: RunKey;
  runId: string;
  name: string;
  state: string | null;
  startedAt: number | null;
  backbone: string | null;
}

export interface DashboardServer {
  /** The URL to open, token included. */
  url: string;
  host: string;
  port: number;
  token: string;
  /** `run` for a single run directory, `root` for a runs root. */
  kind: 'run' | 'root';
  runs(): DashboardRunInfo[];
  close(): Promise<void>;
}

export class DashboardServerError extends Error {}

const MAX_UI_MESSAGE_BYTES = 1 << 20;
const READ_CHUNK = 4 << 20;

/**
 * Reads a run's events.jsonl from byte `from` to its current end in chunks, calling `onBatch` with
 * the envelope-valid events of each chunk. Returns the offset it read to; a torn last line stays in
 * `reader` until its newline arrives.
 */
async function readEvents(
  file: string,
  reader: JsonlReader,
  from: number,
  onBatch: (events: RunEvent[]) => void,
): Promise<number> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch {
    return from; // not written yet: a run that is still setting up
  }
  let offset = from;
  try {
    const buf = Buffer.alloc(READ_CHUNK);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
      const batch = reader.feed(buf.subarray(0, bytesRead)).filter(isRunEvent);
      if (batch.length > 0) onBatch(batch);
    }
  } finally {
    await fh.close();
  }
  return offset;
}

/**
 * One run directory's events.jsonl, followed from where the last read stopped while anyone
 * listens. It keeps no events (a million-step log would be hundreds of MB of objects): a tab that
 * joins later reads the file itself, and its session drops the duplicates by seq.
 */
class RunTail {
  private readonly listeners = new Set<(events: RunEvent[]) => void>();
  private readonly reader = new JsonlReader();
  private offset = 0;
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;

  constructor(
    readonly key: RunKey,
    readonly dir: string,
    private readonly pollMs: number,
  ) {}

  /** Whether nothing has been read yet: the next poll starts at the file's first line. */
  get atStart(): boolean {
    return this.offset === 0;
  }

  /** Reads what was appended since the last read and hands it to every listener; overlapping calls share one read. */
  poll(): Promise<void> {
    this.reading ??= readEvents(path.join(this.dir, 'events.jsonl'), this.reader, this.offset, (batch) => {
      for (const l of this.listeners) l(batch);
    })
      .then((offset) => {
        this.offset = offset;
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }

  /** Calls `listener` with every later batch; polls while anyone listens. */
  subscribe(listener: (events: RunEvent[]) => void): () => void {
    this.listeners.add(listener);
    this.timer ??= setInterval(() => void this.poll().catch(() => {}), this.pollMs);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  stop(): void {
    this.listeners.clear();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

function readJson(file: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function isRunDir(dir: string): boolean {
  return ['events.jsonl', 'status.json', 'spec.json'].some((f) => existsSync(path.join(dir, f)));
}

/** What the UI may know about a run: names and states, never its path. */
function describeRun(key: RunKey, dir: string): DashboardRunInfo {
  const status = readJson(path.join(dir, 'status.json'));
  const spec = readJson(path.join(dir, 'spec.json'));
  const model = spec?.model as Record<string, unknown> | undefined;
  return {
    key,
    runId: path.basename(dir),
    name: typeof spec?.name === 'string' ? spec.name : path.basename(dir),
    state: typeof status?.state === 'string' ? status.state : null,
    startedAt: typeof status?.started_at === 'number' ? status.started_at : null,
    backbone: typeof model?.backbone === 'string' ? model.backbone : null,
  };
}

function targetOf(dir: string): string {
  const host = readJson(path.join(dir, 'status.json'))?.host;
  return typeof host === 'string' && host ? `${host} (local files)` : 'local files';
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function sameToken(given: string | null, token: string): boolean {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function contentSecurityPolicy(nonce: string, wsOrigin: string): string {
  // Styles: the bundle's CSS file; lit's constructable stylesheets and uPlot's element.style writes
  // are not inline <style> or style="" markup, so 'unsafe-inline' is not needed.
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    "style-src 'self'",
    "img-src 'self' data: blob:",
    `connect-src 'self' ${wsOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function shell(token: string, nonce: string): string {
  const t = encodeURIComponent(token);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Ascend Fine-Tune dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard.css?token=${t}">
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="/dashboard.js?token=${t}"></script>
</body>
</html>
`;
}

/** Starts the server; resolves once it listens. Throws DashboardServerError for a bad path. */
export async function startDashboardServer(opts: DashboardServerOptions): Promise<DashboardServer> {
  const target = path.resolve(opts.path);
  if (!existsSync(target) || !statSync(target).isDirectory()) {
    throw new DashboardServerError(
      `${opts.path}: no such folder; pass a run directory (with events.jsonl) or a runs root`,
    );
  }
  for (const f of ['dashboard.js', 'dashboard.css']) {
    if (!existsSync(path.join(opts.assetsDir, f))) {
      throw new DashboardServerError(`${path.join(opts.assetsDir, f)} is missing: build the UI first (npm run build)`);
    }
  }
  const host = opts.host ?? '127.0.0.1';
  const pollMs = opts.pollMs ?? 100;
  const kind: 'run' | 'root' = isRunDir(target) ? 'run' : 'root';
  const token = randomBytes(24).toString('base64url');

  // Runs get keys in the order they are found; a key never changes while the server lives.
  const tails = new Map<RunKey, RunTail>();
  const keyOfDir = new Map<string, RunKey>();
  const addRunDir = (dir: string) => {
    if (keyOfDir.has(dir)) return;
    const key = `r${keyOfDir.size + 1}`;
    keyOfDir.set(dir, key);
    tails.set(key, new RunTail(key, dir, pollMs));
  };
  const rescan = () => {
    if (kind === 'run') return addRunDir(target);
    let names: string[];
    try {
      names = readdirSync(target).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const dir = path.join(target, name);
      try {
        if (statSync(dir).isDirectory() && isRunDir(dir)) addRunDir(dir);
      } catch {
        // removed meanwhile
      }
    }
  };
  rescan();
  const rescanTimer = kind === 'root' ? setInterval(rescan, opts.rescanMs ?? 2000) : undefined;

  const runs = (): DashboardRunInfo[] =>
    [...tails.values()]
      .map((t) => describeRun(t.key, t.dir))
      .sort((a, b) => (b.startedAt ?? 0) - (a.startedAt ?? 0) || b.runId.localeCompare(a.runId));

  let port = 0;
  const allowedHosts = (): Set<string> => {
    const names = LOOPBACK.has(host) ? ['127.0.0.1', 'localhost', '[::1]'] : [host.includes(':') ? `[${host}]` : host];
    return new Set(names.map((n) => `${n}:${port}`));
  };

  /** Why a request must be refused, or null. The same checks guard HTTP and the socket upgrade. */
  const refusal = (req: http.IncomingMessage, url: URL, requireOrigin: boolean): string | null => {
    const hostHeader = req.headers.host ?? '';
    if (LOOPBACK.has(host) && !allowedHosts().has(hostHeader))
      return `unexpected Host header ${JSON.stringify(hostHeader)}`;
    const origin = req.headers.origin;
    if (origin === undefined ? requireOrigin : origin !== `http://${hostHeader}`) return 'cross-origin request';
    if (!sameToken(url.searchParams.get('token'), token)) return 'missing or wrong token';
    return null;
  };

  const serveFile = (res: http.ServerResponse, name: string, type: string, head: boolean) => {
    const body = readFileSync(path.join(opts.assetsDir, name));
    res.writeHead(200, {
      'content-type': type,
      'content-length': body.length,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    res.end(head ? undefined : body);
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('x-frame-options', 'DENY');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' });
      res.end('read-only: only GET\n');
      return;
    }
    const why = refusal(req, url, false);
    if (why) {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end(`forbidden: ${why}; open the URL the dashboard command printed\n`);
      return;
    }
    const head = req.method === 'HEAD';
    try {
      switch (url.pathname) {
        case '/': {
          const nonce = randomBytes(16).toString('base64');
          const body = shell(token, nonce);
          res.writeHead(200, {
            'content-type': 'text/html; charset=utf-8',
            'content-security-policy': contentSecurityPolicy(nonce, `ws://${req.headers.host}`),
            'cache-control': 'no-store',
          });
          res.end(head ? undefined : body);
          return;
        }
        case '/dashboard.js':
          return serveFile(res, 'dashboard.js', 'text/javascript; charset=utf-8', head);
        case '/dashboard.css':
          return serveFile(res, 'dashboard.css', 'text/css; charset=utf-8', head);
        case '/api/runs': {
          const body = JSON.stringify({ kind, runs: runs() });
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
          res.end(head ? undefined : body);
          return;
        }
        default:
          res.writeHead(404, { 'content-type': 'text/plain' });
          res.end('not found\n');
      }
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_UI_MESSAGE_BYTES });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const why = url.pathname !== '/ws' ? 'no such socket' : refusal(req, url, true);
    if (why) {
      socket.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nforbidden: ${why}\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => connect(ws, url));
  });

  /** Which runs a tab shows: `?run=KEY`, `?compare=K1,K2`, or the newest run. */
  const pickRuns = (url: URL): { mode: 'single' | 'compare'; keys: RunKey[] } => {
    const compare = (url.searchParams.get('compare') ?? '').split(',').filter((k) => tails.has(k));
    if (compare.length > 0) return { mode: 'compare', keys: [...new Set(compare)].slice(0, 8) };
    const run = url.searchParams.get('run');
    if (run !== null && tails.has(run)) return { mode: 'single', keys: [run] };
    const newest = runs()[0];
    return { mode: 'single', keys: newest ? [newest.key] : [] };
  };

  const sockets = new Set<WebSocket>();
  const connect = (ws: WebSocket, url: URL) => {
    sockets.add(ws);
    const { mode, keys } = pickRuns(url);
    const session = new DashboardSession({
      mode,
      post: (m: HostMessage) => {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(m));
      },
      appendIntervalMs: 100,
    });
    const unsubscribe: (() => void)[] = [];
    let closed = false;
    ws.on('close', () => {
      closed = true;
      sockets.delete(ws);
      for (const u of unsubscribe) u();
      session.dispose();
    });
    ws.on('error', () => ws.terminate());
    // UI messages wait until every run has its history in the session.
    const pending: unknown[] = [];
    let started = false;
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let value: unknown;
      try {
        value = JSON.parse(data.toString());
      } catch {
        return; // not JSON: ignored like any other invalid message
      }
      if (started) session.receive(value);
      else pending.push(value);
    });
    if (keys.length === 0) {
      ws.send(
        JSON.stringify({
          type: 'status',
          key: null,
          level: 'info',
          message: 'No runs in this folder yet.',
        } satisfies HostMessage),
      );
    }
    void (async () => {
      for (const key of keys) {
        const tail = tails.get(key)!;
        const info = describeRun(key, tail.dir);
        session.addRun(key, { name: info.name, target: targetOf(tail.dir) });
        // Listen first (holding what arrives), then catch up: nothing falls between the two.
        let held: RunEvent[][] | null = [];
        unsubscribe.push(tail.subscribe((events) => (held ? held.push(events) : session.ingest(key, events))));
        // A tail that has read nothing yet brings the whole file to its listeners; otherwise this
        // tab reads the part the tail is past by itself.
        if (!tail.atStart)
          await readEvents(path.join(tail.dir, 'events.jsonl'), new JsonlReader(), 0, (batch) =>
            session.ingest(key, batch),
          );
        await tail.poll();
        if (closed) return;
        for (const batch of held) session.ingest(key, batch);
        held = null;
      }
      started = true;
      for (const v of pending.splice(0)) session.receive(v);
    })().catch((err: unknown) => {
      if (ws.readyState === ws.OPEN) {
        const message = `could not read the run: ${err instanceof Error ? err.message : String(err)}`;
        ws.send(JSON.stringify({ type: 'status', key: null, level: 'error', message } satisfies HostMessage));
      }
    });
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new DashboardServerError(
          `cannot listen on ${host}:${opts.port ?? 0}: ${err.code ?? err.message}; pick another --port or --host`,
        ),
      ),
    );
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}/?token=${token}`,
    host,
    port,
    token,
    kind,
    runs,
    close: async () => {
      if (rescanTimer) clearInterval(rescanTimer);
      for (const t of tails.values()) t.stop();
      for (const ws of sockets) ws.terminate();
      wss.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

const DASHBOARD_USAGE = `usage: ascend-finetune dashboard <run dir | runs root> [--host H] [--port N]
  serves a live dashboard of the run (or of every run in a runs root) to a browser;
  --host  address to bind (default 127.0.0.1; anything else exposes it to that network, token-protected)
  --port  port to listen on (default: any free port)`;

export interface DashboardCommandArgs {
  path: string;
  host?: string;
  port?: number;
}

/** Parses `dashboard` arguments; throws DashboardServerError with the usage on bad input. */
export function parseDashboardArgs(args: string[]): DashboardCommandArgs {
  const out: Partial<DashboardCommandArgs> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--host') {
      const h = args[++i];
      if (!h) throw new DashboardServerError(`--host needs an address, e.g. 127.0.0.1\n\n${DASHBOARD_USAGE}`);
      out.host = h;
    } else if (a === '--port') {
      const n = Number(args[++i]);
      if (!Number.isInteger(n) || n < 0 || n > 65535)
        throw new DashboardServerError(`--port needs a whole number from 0 to 65535\n\n${DASHBOARD_USAGE}`);
      out.port = n;
    } else if (a.startsWith('-')) {
      throw new DashboardServerError(`unknown dashboard option: ${a}\n\n${DASHBOARD_USAGE}`);
    } else if (out.path === undefined) {
      out.path = a;
    } else {
      throw new DashboardServerError(`dashboard takes one folder, got a second: ${a}\n\n${DASHBOARD_USAGE}`);
    }
  }
  if (out.path === undefined)
    throw new DashboardServerError(`dashboard needs a run directory or a runs root\n\n${DASHBOARD_USAGE}`);
  return out as DashboardCommandArgs;
}

/** `ascend-finetune dashboard ...`: serves until SIGINT/SIGTERM. */
export async function runDashboardCommand(args: string[], assetsDir: string): Promise<number> {
  const parsed = parseDashboardArgs(args);
  const srv = await startDashboardServer({ ...parsed, assetsDir });
  const what =
    srv.kind === 'run'
      ? `run ${path.basename(path.resolve(parsed.path))}`
      : `${srv.runs().length} run(s) in ${path.resolve(parsed.path)}`;
  console.log(`dashboard for ${what}: ${srv.url}`);
  console.log('Ctrl+C to stop serving (the runs go on)');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await srv.close();
  return 0;
}
