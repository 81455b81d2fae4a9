// The dashboard in a plain browser: `ascend-finetune dashboard <run dir | runs root>`. Serves the
// webview bundle (dist/webview/dashboard.{js,css}) in an HTML shell over HTTP and talks to each tab
// over a WebSocket, one DashboardSession per tab, on one shared series store per run.
//
// Security: bound to 127.0.0.1 unless told otherwise; a random token must be on every request and on
// the socket; the Host header (on a loopback bind) and the Origin must name this server, which stops
// DNS rebinding and other pages' scripts; only GET/HEAD; a request target that is not a plain path
// is 400 before anything else looks at it; no path ever comes from the client (runs are addressed
// by opaque keys this server hands out); UI messages go through the session's validation; run
// files are read as regular files only, with size caps (runFiles.ts); what one tab may cost is
// bounded (tabs.ts).
//
// The parts: httpRoutes.ts (target parsing, the Gate's checks, what HTTP serves), tabs.ts (the
// sockets and their sessions), runRegistry.ts (the runs, their keys, their shared stores),
// runFiles.ts (reading a run directory that anyone may have written).
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { WebSocketServer } from 'ws';
import { Gate, handleRequest, parseTarget } from './httpRoutes';
import { Locales } from './locale';
import { isRunDir, RunRegistry, type DashboardRunInfo } from './runRegistry';
import { Tabs, type TabLimits } from './tabs';

export type { DashboardRunInfo } from './runRegistry';

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
  /** `--lang`: the page's language whatever the browser asks (default: its Accept-Language). */
  lang?: string;
  /** Folder of the l10n bundles (bundle.l10n.<locale>.json). Default: the extension's l10n/, two
   * folders above `assetsDir` (dist/webview). */
  l10nDir?: string;
}

/** What the server holds right now (for tests, the bench, and anyone wondering). */
export interface DashboardStats {
  sockets: number;
  /** Bytes waiting in all the tabs' send buffers. */
  queuedBytes: number;
  limits: TabLimits;
  /** Per run: tabs listening, times its store was loaded from the start, bytes of events.jsonl read. */
  runs: { key: string; tabs: number; loads: number; bytesRead: number }[];
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
  stats(): DashboardStats;
  close(): Promise<void>;
}

export class DashboardServerError extends Error {}

const MAX_UI_MESSAGE_BYTES = 1 << 20;

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
  const kind: 'run' | 'root' = isRunDir(target) ? 'run' : 'root';
  const gate = new Gate(host, randomBytes(24).toString('base64url'));
  const registry = new RunRegistry(target, kind, opts.pollMs ?? 100);
  const rescanTimer = kind === 'root' ? setInterval(() => registry.rescan(), opts.rescanMs ?? 2000) : undefined;
  const tabs = new Tabs(registry);
  const locales = new Locales(opts.l10nDir ?? path.join(opts.assetsDir, '..', '..', 'l10n'), opts.lang);

  const server = http.createServer((req, res) =>
    handleRequest(
      {
        gate,
        assetsDir: opts.assetsDir,
        runList: (t) => ({ kind, runs: registry.runs(t) }),
        locale: (accept) => locales.forRequest(accept),
      },
      req,
      res,
    ),
  );
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_UI_MESSAGE_BYTES });
  server.on('upgrade', (req: http.IncomingMessage, socket, head) => {
    socket.on('error', () => socket.destroy());
    const refuse = (status: string, why: string) =>
      socket.end(`HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${why}\n`);
    try {
      const url = parseTarget(req.url);
      if (!url) return refuse('400 Bad Request', 'bad request target');
      const why = url.pathname !== '/ws' ? 'no such socket' : gate.refusal(req, url, true);
      if (why) return refuse('403 Forbidden', `forbidden: ${why}`);
      // the tab's sentences (the AMP card, banners) in the page's language: the socket's request
      // carries the same Accept-Language as the page's
      const { t, language } = locales.forRequest(req.headers['accept-language']);
      wss.handleUpgrade(req, socket, head, (ws) => tabs.connect(ws, url, t, language));
    } catch {
      socket.destroy();
    }
  });

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
  const port = (server.address() as AddressInfo).port;
  gate.port = port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}/?token=${gate.token}`,
    host,
    port,
    token: gate.token,
    kind,
    runs: () => registry.runs(),
    stats: () => ({
      sockets: tabs.count,
      queuedBytes: tabs.queuedBytes(),
      limits: { ...tabs.limits },
      runs: registry.all().map((f) => ({ key: f.key, tabs: f.tabs, loads: f.loads, bytesRead: f.bytesRead })),
    }),
    close: async () => {
      if (rescanTimer) clearInterval(rescanTimer);
      registry.stop();
      tabs.closeAll();
      wss.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
