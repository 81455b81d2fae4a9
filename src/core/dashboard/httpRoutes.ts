// The browser dashboard's HTTP side: the request target parsed without ever throwing, the checks
// every request and socket upgrade must pass (Host, Origin, token), and the few things served
// (the HTML shell with its CSP, the UI bundle's two files, the run list).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import type { PageLocale } from './locale';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * The request target as a URL, or null when it is not an origin-form path this server could have
 * handed out ("//host...", "http://...", "*", or anything `new URL` refuses): answered with 400.
 */
export function parseTarget(target: string | undefined): URL | null {
  if (!target || !target.startsWith('/') || target.startsWith('//')) return null;
  try {
    return new URL(`http://localhost${target}`);
  } catch {
    return null;
  }
}

function sameToken(given: string | null, token: string): boolean {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Who may talk to the server: the token, and on a loopback bind the Host header; the Origin always. */
export class Gate {
  /** Set once the server listens. */
  port = 0;

  constructor(
    readonly host: string,
    readonly token: string,
  ) {}

  private allowedHosts(): Set<string> {
    const h = this.host;
    const names = LOOPBACK.has(h) ? ['127.0.0.1', 'localhost', '[::1]'] : [h.includes(':') ? `[${h}]` : h];
    return new Set(names.map((n) => `${n}:${this.port}`));
  }

  /** Why a request must be refused, or null. The same checks guard HTTP and the socket upgrade. */
  refusal(req: http.IncomingMessage, url: URL, requireOrigin: boolean): string | null {
    const hostHeader = req.headers.host ?? '';
    if (LOOPBACK.has(this.host) && !this.allowedHosts().has(hostHeader))
      return `unexpected Host header ${JSON.stringify(hostHeader.slice(0, 100))}`;
    const origin = req.headers.origin;
    if (origin === undefined ? requireOrigin : origin !== `http://${hostHeader}`) return 'cross-origin request';
    if (!sameToken(url.searchParams.get('token'), this.token)) return 'missing or wrong token';
    return null;
  }
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

function shell(token: string, nonce: string, locale: PageLocale): string {
  const tok = encodeURIComponent(token);
  const { t } = locale;
  // the bundle for the page's language, read by webview/shared/l10n.ts (English: none)
  const l10n =
    locale.language === 'en'
      ? ''
      : ` data-lang="${escapeAttr(locale.language)}" data-l10n="${escapeAttr(JSON.stringify(locale.bundle))}"`;
  return `<!doctype html>
<html lang="${escapeAttr(locale.language)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(t('Ascend Fine-Tune dashboard'))}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard.css?token=${tok}">
</head>
<body${l10n}>
<div id="app"></div>
<script nonce="${nonce}" src="/dashboard.js?token=${tok}"></script>
</body>
</html>
`;
}

function serveAsset(res: http.ServerResponse, assetsDir: string, name: string, type: string, head: boolean): void {
  const body = readFileSync(path.join(assetsDir, name));
  res.writeHead(200, {
    'content-type': type,
    'content-length': body.length,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(head ? undefined : body);
}

function plain(res: http.ServerResponse, status: number, text: string, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain', ...headers });
  res.end(text);
}

export interface Routes {
  gate: Gate;
  assetsDir: string;
  /** The body of /api/runs; `t`: the request's language (the runs' problems are worded in it). */
  runList(t: PageLocale['t']): unknown;
  /** The page's language and bundle for a request's Accept-Language. */
  locale(acceptLanguage: string | undefined): PageLocale;
}

/** The HTTP request handler: never throws (a bad target is 400, a failure 500). */
export function handleRequest(r: Routes, req: http.IncomingMessage, res: http.ServerResponse): void {
  try {
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('x-frame-options', 'DENY');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return plain(res, 405, 'read-only: only GET\n', { allow: 'GET, HEAD' });
    const url = parseTarget(req.url);
    if (!url) return plain(res, 400, 'bad request target\n', { connection: 'close' });
    const why = r.gate.refusal(req, url, false);
    if (why) return plain(res, 403, `forbidden: ${why}; open the URL the dashboard command printed\n`);
    const head = req.method === 'HEAD';
    switch (url.pathname) {
      case '/': {
        const nonce = randomBytes(16).toString('base64');
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': contentSecurityPolicy(nonce, `ws://${req.headers.host}`),
          'cache-control': 'no-store',
        });
        res.end(head ? undefined : shell(r.gate.token, nonce, r.locale(req.headers['accept-language'])));
        return;
      }
      case '/dashboard.js':
        return serveAsset(res, r.assetsDir, 'dashboard.js', 'text/javascript; charset=utf-8', head);
      case '/dashboard.css':
        return serveAsset(res, r.assetsDir, 'dashboard.css', 'text/css; charset=utf-8', head);
      case '/api/runs': {
        const body = JSON.stringify(r.runList(r.locale(req.headers['accept-language']).t));
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(head ? undefined : body);
        return;
      }
      default:
        return plain(res, 404, 'not found\n');
    }
  } catch (err) {
    if (res.headersSent) return void res.destroy();
    plain(res, 500, `error: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
