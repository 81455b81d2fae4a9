// `ascend-finetune dashboard` arguments: one folder (a run directory or a runs root), --host, --port, --lang.
import { DashboardServerError } from '../core/dashboard/server';
import { bundleLocale } from '../shared/l10n';

export const DASHBOARD_USAGE = `usage: ascend-finetune dashboard <run dir | runs root> [--host H] [--port N] [--lang L]
  serves a live dashboard of the run (or of every run in a runs root) to a browser;
  --host  address to bind (default 127.0.0.1; anything else exposes it to that network, token-protected)
  --port  port to listen on (default: any free port)
  --lang  the page's language, en or zh-cn (default: the browser's Accept-Language)`;

export interface DashboardCommandArgs {
  path: string;
  host?: string;
  port?: number;
  lang?: string;
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
    } else if (a === '--lang') {
      const l = (args[++i] ?? '').toLowerCase();
      if (l !== 'en' && !bundleLocale(l))
        throw new DashboardServerError(`--lang needs en or zh-cn, got "${l}"\n\n${DASHBOARD_USAGE}`);
      out.lang = l;
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
