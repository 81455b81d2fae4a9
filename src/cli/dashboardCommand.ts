// `ascend-finetune dashboard ...`: starts the browser dashboard's server and serves until SIGINT or
// SIGTERM. One signal is enough: the server closes (its sockets cut), and if anything still held
// the process after that, an unref'd timer ends it.
import * as path from 'node:path';
import { startDashboardServer } from '../core/dashboard/server';
import { parseDashboardArgs } from './dashboardArgs';

const CLOSE_GRACE_MS = 2000;

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
  await Promise.race([srv.close(), new Promise((r) => setTimeout(r, CLOSE_GRACE_MS).unref())]);
  setTimeout(() => process.exit(0), CLOSE_GRACE_MS).unref();
  return 0;
}
