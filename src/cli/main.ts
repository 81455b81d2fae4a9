#!/usr/bin/env node
// `node dist/cli.js <command>` (the package's `ascend-finetune` bin): the project's command line, built on src/core only.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { followRun } from '../core/runs/attach';
import { DashboardServerError, startDashboardServer, type DashboardServer } from '../core/dashboard/server';
import { runDashboardCommand } from './dashboardCommand';
import { formatCheckpoint, formatEval, formatSummary, formatWarning, ProgressTracker } from '../core/runs/progress';
import { controlRun, launchRun, RunnerError, runRunner, type RunnerConfig } from '../core/targets/runnerCli';
import { isKnownEvent, type RunStartedEvent } from '../shared/eventsProtocol';

const USAGE = `usage: ascend-finetune <command>

commands:
  demo [--steps-every N] [--keep] [--port N] [--no-dashboard]
                                    train a small model on generated images on the CPU and watch it,
                                    in the terminal and in a browser dashboard (its URL is printed)
                                    --steps-every N  print progress every N steps (default 5)
                                    --keep           keep earlier demo runs in .demo/runs
                                    --port N         the dashboard's port (default: any free port)
                                    --no-dashboard   terminal progress only
  dashboard <run dir | runs root> [--host H] [--port N]
                                    serve a live dashboard of a run (or of every run in a folder)
                                    to a browser, on 127.0.0.1 with a token in the printed URL`;

interface DemoOptions {
  stepsEvery: number;
  keep: boolean;
  dashboard: boolean;
  port: number;
}

function parseDemoArgs(args: string[]): DemoOptions {
  const opts: DemoOptions = { stepsEvery: 5, keep: false, dashboard: true, port: 0 };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--keep') opts.keep = true;
    else if (a === '--no-dashboard') opts.dashboard = false;
    else if (a === '--port') {
      const n = Number(args[++i]);
      if (!Number.isInteger(n) || n < 0 || n > 65535)
        throw new UsageError('--port needs a whole number from 0 to 65535');
      opts.port = n;
    } else if (a === '--steps-every') {
      const n = Number(args[++i]);
      if (!Number.isInteger(n) || n < 1) throw new UsageError('--steps-every needs a whole number >= 1');
      opts.stepsEvery = n;
    } else throw new UsageError(`unknown demo option: ${a}`);
  }
  return opts;
}

class UsageError extends Error {}

/** The checkout this CLI was built from: dist/cli.js sits one level below package.json. */
function repoRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'ascend-finetune') return dir;
    if (path.dirname(dir) === dir) throw new Error(`no ascend-finetune package.json above ${__dirname}`);
  }
}

async function demo(opts: DemoOptions): Promise<number> {
  const root = repoRoot();
  const python = path.join(root, '.venv', 'bin', 'python');
  if (!existsSync(python)) throw new Error(`${python} is missing: run bash scripts/setup-python.sh`);
  const runner: RunnerConfig = { python, runnerDir: path.join(root, 'runner') };
  const demoDir = path.join(root, '.demo');

  // Fresh images every time; earlier runs go too unless --keep.
  await rm(opts.keep ? path.join(demoDir, 'data') : demoDir, { recursive: true, force: true });
  await mkdir(demoDir, { recursive: true });

  const data = await runRunner<{ train: string; classes: string[] }>(runner, [
    'make-demo-data',
    path.join(demoDir, 'data'),
    // 60 a class: the 10% val split then holds 24 images, enough for the run's verdict to judge.
    '--per-class',
    '60',
  ]);
  console.log(`demo data: ${data.classes.length} classes (${data.classes.join(', ')}) in ${data.train}`);

  const spec = {
    name: 'demo',
    data: { train: data.train, image_size: 32, batch_size: 16, workers: 2 },
    model: { backbone: 'resnet18', pretrained: null, freeze: 'none' },
    train: { epochs: 5, lr: 0.01 },
    amp: { level: 'O2' },
    checkpoint: { every_steps: 20 },
    device: { target: 'CPU' },
  };
  const specFile = path.join(demoDir, 'spec.json');
  await writeFile(specFile, JSON.stringify(spec, null, 2) + '\n');

  const run = await launchRun(runner, specFile, path.join(demoDir, 'runs'));
  console.log(`launched run ${run.run_id} (pid ${run.pid}) in ${run.run_dir}`);
  let dashboard: DashboardServer | undefined;
  if (opts.dashboard) {
    // The run is already going: a dashboard that cannot start (a taken --port) must not end the demo.
    try {
      dashboard = await startDashboardServer({
        path: run.run_dir,
        assetsDir: path.join(root, 'dist', 'webview'),
        port: opts.port,
      });
      console.log(`dashboard: ${dashboard.url}`);
    } catch (err) {
      console.error(`no dashboard: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  // First Ctrl+C asks the run to stop and keeps following to its end; a second one leaves it.
  const leave = new AbortController();
  let interrupts = 0;
  const onInterrupt = () => {
    if (++interrupts > 1) {
      console.log(
        `\nleft run ${run.run_id} running; stop it with: ${python} -m ascend_finetune control ${run.run_dir} stop`,
      );
      leave.abort();
      return;
    }
    console.log('\nstopping the run (Ctrl+C again to leave it running)');
    controlRun(runner, run.run_dir, 'stop').catch((err: Error) => console.error(`stop failed: ${err.message}`));
  };
  process.on('SIGINT', onInterrupt);

  const tracker = new ProgressTracker();
  let status: string | undefined;
  try {
    for await (const event of followRun({
      runner,
      runDir: run.run_dir,
      signal: leave.signal,
      // Ctrl+C also reaches the attach process (same process group): that drop is expected.
      onReconnect: (r) => {
        if (!interrupts)
          console.error(`attach dropped (${r.reason}); reconnecting after seq ${r.since} in ${r.delayMs} ms`);
      },
      onGap: (expected, got) => console.error(`events ${expected}..${got - 1} are missing`),
      onBadLine: (line) => console.error(`skipped a line that is not JSON: ${line.slice(0, 120)}`),
    })) {
      tracker.apply(event);
      if (!isKnownEvent(event)) continue;
      switch (event.type) {
        case 'run_started':
          console.log(describeStart(event));
          break;
        case 'step':
          if (event.step % opts.stepsEvery === 0 || event.step === tracker.totalSteps) console.log(tracker.line());
          break;
        case 'eval':
          console.log(formatEval(event));
          break;
        case 'checkpoint':
          console.log(formatCheckpoint(event));
          break;
        case 'warning':
          console.log(formatWarning(event));
          break;
        case 'run_finished':
          status = event.status;
          console.log(formatSummary(event, tracker));
          break;
      }
    }
  } finally {
    process.off('SIGINT', onInterrupt);
  }
  if (dashboard) {
    // In a terminal the dashboard stays up to look at the finished run; in a script it closes.
    if (process.stdout.isTTY && !leave.signal.aborted) {
      console.log(`the dashboard stays at ${dashboard.url} until Ctrl+C`);
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
    }
    await dashboard.close();
  }
  return status === 'completed' ? 0 : 1;
}

function describeStart(e: RunStartedEvent): string {
  const device = typeof e.device === 'string' ? e.device : JSON.stringify(e.device);
  return (
    `run ${e.run_id}: ${e.num_train} train / ${e.num_val} val images, ${e.classes.length} classes, ` +
    `${e.total_steps} steps (${e.steps_per_epoch} per epoch) on ${device}`
  );
}

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
