#!/usr/bin/env node
// `node dist/cli.js <command>` (the package's `ascend-finetune` bin): the project's command line, built on src/core only.
import * as path from 'node:path';
import { DashboardServerError } from '../core/dashboard/server';
import { runDashboardCommand } from './dashboardCommand';
import { demo, parseDemoArgs, UsageError } from './demo';
import { RunnerError } from '../core/targets/runnerCli';

const USAGE = `usage: ascend-finetune <command>

commands:
  demo [--steps-every N] [--keep] [--port N] [--no-dashboard] [--dir D]
                                    a real transfer on generated images on the CPU: resnet18 trained
                                    on task A, then fine-tuned from it on task B (backbone frozen),
                                    watched in the terminal and in a browser dashboard (URL printed)
                                    --steps-every N  print progress every N steps (default 5)
                                    --keep           keep earlier demo runs in .demo/runs
                                    --dir D          use folder D instead of .demo
                                    --port N         the dashboard's port (default: any free port)
                                    --no-dashboard   terminal progress only
  dashboard <run dir | runs root> [--host H] [--port N]
                                    serve a live dashboard of a run (or of every run in a folder)
                                    to a browser, on 127.0.0.1 with a token in the printed URL`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'demo':
      return demo(parseDemoArgs(rest));
    case 'dashboard':
      // dist/cli.js serves the UI bundle built beside it, in dist/webview.
      return runDashboardCommand(rest, path.join(__dirname, 'webview'));
    case '-h':
    case '--help':
      console.log(USAGE);
      return 0;
    default:
      console.error(command === undefined ? USAGE : `unknown command: ${command}\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof DashboardServerError) {
      // A dashboard error carries its own usage (or names the folder), not the whole command list.
      console.error(err instanceof DashboardServerError ? err.message : `${err.message}\n\n${USAGE}`);
      process.exitCode = 2;
      return;
    }
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    if (err instanceof RunnerError && err.info === undefined && err.stderrTail) console.error(err.stderrTail.trimEnd());
    process.exitCode = 1;
  },
);
