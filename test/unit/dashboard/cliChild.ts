// `ascend-finetune dashboard ARGS...` as the CLI runs it, for tests that need the server in its own
// process (start-up time, signals): serves a stand-in UI bundle from a temp folder, prints the URL
// line the real command prints, exits with the command's code.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runDashboardCommand } from '../../../src/cli/dashboardCommand';

const assets = mkdtempSync(path.join(tmpdir(), 'dash-child-assets-'));
writeFileSync(path.join(assets, 'dashboard.js'), 'console.log("ui")');
writeFileSync(path.join(assets, 'dashboard.css'), 'body{}');
// Signals end this process through process.exit as well (the command's handlers), so 'exit' covers them.
process.on('exit', () => rmSync(assets, { recursive: true, force: true }));
runDashboardCommand(process.argv.slice(2), assets).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(2);
  },
);
