// `ascend-finetune demo`: a real transfer on this CPU in two runs, watched in the terminal and in a
// browser dashboard. Run 1 trains resnet18 on task A (four coloured shapes) from random weights: the
// "pretrained" backbone a user would otherwise download, as there is no model hub to reach here.
// Run 2 is the fine-tune: task A's best checkpoint, backbone frozen (features cached), a new head on
// task B (three shapes in other colours) from 10 labelled images a class.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { checkpointPath } from '../core/checkpoints/client';
import { startDashboardServer, type DashboardServer } from '../core/dashboard/server';
import { followRun } from '../core/runs/attach';
import { formatCheckpoint, formatEval, formatSummary, formatWarning, ProgressTracker } from '../core/runs/progress';
import { controlRun, launchRun, runRunner, type RunnerConfig } from '../core/targets/runnerCli';
import { isKnownEvent, type RunFinishedEvent, type RunStartedEvent } from '../shared/eventsProtocol';

export interface DemoOptions {
  stepsEvery: number;
  keep: boolean;
  dashboard: boolean;
  port: number;
  /** Where the data, specs and runs go (default: .demo in the checkout). */
  dir?: string;
}

export class UsageError extends Error {}

export function parseDemoArgs(args: string[]): DemoOptions {
  const opts: DemoOptions = { stepsEvery: 5, keep: false, dashboard: true, port: 0 };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--keep') opts.keep = true;
    else if (a === '--no-dashboard') opts.dashboard = false;
    else if (a === '--dir') {
      const d = args[++i];
      if (!d) throw new UsageError('--dir needs a folder');
      opts.dir = path.resolve(d);
    } else if (a === '--port') {
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

/** The checkout this CLI runs from: dist/cli.js (or src/cli/ under tsx) sits below package.json. */
function repoRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'ascend-finetune') return dir;
    if (path.dirname(dir) === dir) throw new Error(`no ascend-finetune package.json above ${__dirname}`);
  }
}

type Shapes = { train: string; classes: string[]; images: number };

export async function demo(opts: DemoOptions): Promise<number> {
  const root = repoRoot();
  const python = path.join(root, '.venv', 'bin', 'python');
  if (!existsSync(python)) throw new Error(`${python} is missing: run bash scripts/setup-python.sh`);
  const runner: RunnerConfig = { python, runnerDir: path.join(root, 'runner') };
  const demoDir = opts.dir ?? path.join(root, '.demo');
  const runsRoot = path.join(demoDir, 'runs');

  // Fresh images every time; earlier runs go too unless --keep.
  await rm(opts.keep ? path.join(demoDir, 'data') : demoDir, { recursive: true, force: true });
  await mkdir(runsRoot, { recursive: true });
  const shapes = (out: string, task: 'a' | 'b', perClass: number, seed: number) =>
    runRunner<Shapes>(runner, [
      'make-demo-data',
      path.join(demoDir, 'data', out),
      ...['--task', task, '--per-class', String(perClass), '--seed', String(seed)],
    ]);
  // Task A: 60 a class, so its 10% validation split (24 images) is enough for the verdict to judge.
  const a = await shapes('task-a', 'a', 60, 0);
  const bTrain = await shapes('task-b/train', 'b', 10, 3);
  const bVal = await shapes('task-b/val', 'b', 20, 4);
  console.log(`task A: ${a.classes.length} classes (${a.classes.join(', ')}), ${a.images} images`);
  console.log(
    `task B: ${bTrain.classes.length} classes (${bTrain.classes.join(', ')}), ` +
      `${bTrain.images} images to train on, ${bVal.images} to validate on`,
  );

  // The runs root, so the page lists both runs as they come (the second starts after the first).
  let dashboard: DashboardServer | undefined;
  if (opts.dashboard) {
    // A dashboard that cannot start (a taken --port) must not end the demo.
    try {
      dashboard = await startDashboardServer({
        path: runsRoot,
        assetsDir: path.join(root, 'dist', 'webview'),
        port: opts.port,
      });
      console.log(`dashboard: ${dashboard.url}`);
    } catch (err) {
      console.error(`no dashboard: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  const watch: Watch = { runner, python, stepsEvery: opts.stepsEvery };
  try {
    console.log('\n== 1/2 pretrain: resnet18 from random weights on task A (the backbone to transfer)');
    const pre = await trainAndFollow(watch, path.join(demoDir, 'pretrain.json'), runsRoot, {
      name: 'demo-pretrain',
      data: { train: a.train, image_size: 32, batch_size: 16, workers: 2 },
      model: { backbone: 'resnet18', pretrained: null, freeze: 'none' },
      train: { epochs: 5, lr: 0.01 },
      amp: { level: 'O2' },
      checkpoint: { every_steps: 20, keep_max: 2 },
      device: { target: 'CPU' },
    });
    if (pre.end?.status !== 'completed' || !pre.end.best) {
      console.error('the pretraining run did not complete with a checkpoint: no fine-tune');
      return 1;
    }
    const weights = checkpointPath(pre.runDir, pre.end.best.file);

    console.log(`\n== 2/2 fine-tune on task B from ${path.basename(weights)}: backbone frozen, a new head`);
    // A backbone trained briefly from scratch gives large features: AdamW with a small rate settles
    // the head on them (the recipe's 0.01 suits ImageNet features). The frozen backbone's features are
    // computed once and cached, so the epochs cost next to nothing.
    const ft = await trainAndFollow(watch, path.join(demoDir, 'fine-tune.json'), runsRoot, {
      name: 'demo',
      data: { train: bTrain.train, val: bVal.train, image_size: 32, batch_size: 10, workers: 2 },
      model: { backbone: 'resnet18', pretrained: weights, freeze: 'backbone' },
      train: { epochs: 15, optimizer: 'adamw', lr: 1e-3, lr_schedule: 'cosine', cache_features: true },
      // O0: with 3 steps an epoch, O2's first loss-scale overflows would skip a good share of them,
      // and fp16 is not faster on a CPU (the runner's own advice there).
      amp: { level: 'O0' },
      // every 5 epochs (45 steps) and at each epoch end: the best and the newest two are kept
      checkpoint: { every_steps: 15, keep_max: 2 },
      device: { target: 'CPU' },
    });
    const acc = ft.end?.best?.metrics.val_acc;
    if (typeof acc === 'number')
      console.log(
        `\nfine-tuned: ${(acc * 100).toFixed(1)}% validation accuracy on task B ` +
          `(chance ${(100 / bTrain.classes.length).toFixed(1)}%) from ${bTrain.images} labelled images`,
      );
    if (dashboard && process.stdout.isTTY && !watch.left) {
      // In a terminal the dashboard stays up to look at the finished runs; in a script it closes.
      console.log(`the dashboard stays at ${dashboard.url} until Ctrl+C`);
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
    }
    return ft.end?.status === 'completed' && pre.end.status === 'completed' ? 0 : 1;
  } finally {
    await dashboard?.close();
  }
}

interface Watch {
  runner: RunnerConfig;
  python: string;
  stepsEvery: number;
  /** Set when the user pressed Ctrl+C twice: the run goes on, the demo stops following. */
  left?: boolean;
}

/** Launches a run of `spec` (written to `specFile`) and prints its progress until it ends. */
async function trainAndFollow(
  w: Watch,
  specFile: string,
  runsRoot: string,
  spec: Record<string, unknown>,
): Promise<{ runDir: string; end?: RunFinishedEvent }> {
  await writeFile(specFile, JSON.stringify(spec, null, 2) + '\n');
  const run = await launchRun(w.runner, specFile, runsRoot);
  console.log(`launched run ${run.run_id} (pid ${run.pid}) in ${run.run_dir}`);

  // First Ctrl+C asks the run to stop and keeps following to its end; a second one leaves it.
  const leave = new AbortController();
  let interrupts = 0;
  const onInterrupt = () => {
    if (++interrupts > 1) {
      console.log(
        `\nleft run ${run.run_id} running; stop it with: ${w.python} -m ascend_finetune control ${run.run_dir} stop`,
      );
      w.left = true;
      leave.abort();
      return;
    }
    console.log('\nstopping the run (Ctrl+C again to leave it running)');
    controlRun(w.runner, run.run_dir, 'stop').catch((err: Error) => console.error(`stop failed: ${err.message}`));
  };
  process.on('SIGINT', onInterrupt);

  const tracker = new ProgressTracker();
  let end: RunFinishedEvent | undefined;
  try {
    for await (const event of followRun({
      runner: w.runner,
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
          if (event.step % w.stepsEvery === 0 || event.step === tracker.totalSteps) console.log(tracker.line());
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
          end = event;
          console.log(formatSummary(event, tracker));
          break;
      }
    }
  } finally {
    process.off('SIGINT', onInterrupt);
  }
  return { runDir: run.run_dir, end };
}

function describeStart(e: RunStartedEvent): string {
  const device = typeof e.device === 'string' ? e.device : JSON.stringify(e.device);
  return (
    `run ${e.run_id}: ${e.num_train} train / ${e.num_val} val images, ${e.classes.length} classes, ` +
    `${e.total_steps} steps (${e.steps_per_epoch} per epoch) on ${device}`
  );
}
