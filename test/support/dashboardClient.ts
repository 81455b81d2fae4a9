// A test client for the browser dashboard's server: HTTP GETs and WebSocket tabs with an inbox.
import * as http from 'node:http';
import WebSocket from 'ws';
import type { HostMessage } from '../../src/shared/dashboardProtocol';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export function get(port: number, pathAndQuery: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathAndQuery, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens a tab's socket; resolves once open, rejects with the HTTP status that refused it. */
export function openSocket(port: number, query: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws${query}`, { origin: `http://127.0.0.1:${port}` });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Collects a socket's messages; `next(pred)` waits for the first (past or future) one that matches. */
export function inbox(ws: WebSocket) {
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
          () => reject(new Error(`no matching message; got ${got.map((m) => m.type).join(',') || 'nothing'}`)),
          timeoutMs,
        );
        waiters.push({ pred, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      });
    },
  };
}

/** Waits until `cond()` holds, polling every 10 ms; fails with `what` after `ms`. */
export async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
