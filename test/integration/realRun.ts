// Shared by the integration tests: a real runner on this checkout, a tiny data set, a short run,
// and followers that check what they got against the run's own events.jsonl.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { followRun, type ReconnectInfo } from '../../src/core/runs/attach';
import { runRunner } from '../../src/core/targets/runnerCli';
import type { RunnerProcess, Target } from '../../src/core/targets/target';
import type { RunEvent, RunStartedEvent } from '../../src/shared/eventsProtocol';

export const ROOT = path.resolve(__dirname, '..', '..');
export const PYTHON = path.join(ROOT, '.venv', 'bin', 'python');
export const RUNNER_DIR = path.join(ROOT, 'runner');

export function requirePython(): void {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run bash scripts/setup-python.sh`);
}

/** Generated images (4 classes x 16, 32 px) in `dir`, made by the runner through `target`. */
export async function makeData(target: Target, dir: string): Promise<string> {
  const out = await runRunner<{ train: string }>(target, ['make-demo-data', dir, '--per-class', '16', '--size', '32']);
  return out.train;
}

/** A spec for a ~15-25 s CPU run: 3 steps per epoch, 2 epochs. */
export function writeSpec(file: string, train: string): void {
  const spec = {
    name: 'it',
    data: { train, image_size: 32, batch_size: 16, workers: 2 },
    model: { backbone: 'resnet18', freeze: 'none' },
    train: { epochs: 2, lr: 0.01 },
    amp: { level: 'O2', init_scale: 1024 },
    checkpoint: { every_steps: 1000 },
    device: { target: 'CPU' },
  };
  writeFileSync(file, JSON.stringify(spec, null, 2) + '\n');
}

export function fileEvents(runDir: string): RunEvent[] {
  const text = readFileSync(path.join(runDir, 'events.jsonl'), 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RunEvent);
}

export interface Followed {
  events: RunEvent[];
  gaps: number[][];
  reconnects: ReconnectInfo[];
  kills: number;
}

/**
 * Follows a run to run_finished. With `kill`, the attach (or ssh) process is SIGKILLed after
 * every `kill.every` new events, `kill.times` times, to force reconnects in mid-stream.
 */
export async function follow(
  target: Target,
  runDir: string,
  kill?: { every: number; times: number },
): Promise<Followed> {
  const children: RunnerProcess[] = [];
  // Every process followRun starts goes through here, so the test can kill the current one.
  const recording: Target = {
    ...target,
    spawnRunner(args, opts) {
      const child = target.spawnRunner(args, opts);
      children.push(child);
      return child;
    },
  };
  const result: Followed = { events: [], gaps: [], reconnects: [], kills: 0 };
  let sinceKill = 0;
  for await (const e of followRun({
    runner: recording,
    runDir,
    backoffMs: 50,
    onGap: (a, b) => result.gaps.push([a, b]),
    onReconnect: (r) => result.reconnects.push(r),
  })) {
    result.events.push(e);
    if (kill && result.kills < kill.times && e.type !== 'run_finished' && ++sinceKill >= kill.every) {
      // Only a kill that cuts a live stream counts: one that already ended would force no reconnect.
      const child = children.at(-1);
      if (child && child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')) {
        result.kills++;
        sinceKill = 0;
      }
    }
  }
  return result;
}

/** Every seq once, in order, equal to the file, ending with a completed run_finished. */
export function assertComplete(got: Followed, runDir: string): void {
  const file = fileEvents(runDir);
  assert.deepEqual(
    got.events.map((e) => e.seq),
    Array.from({ length: got.events.length }, (_, i) => i + 1),
    'seq 1..N, each once',
  );
  assert.deepEqual(got.events, file, 'the same events as events.jsonl');
  assert.deepEqual(got.gaps, []);
  const last = got.events.at(-1);
  assert.equal(last?.type, 'run_finished');
  assert.equal((last as { status?: string }).status, 'completed');
  assert.ok(got.events.filter((e) => e.type === 'step').length >= 6, 'at least 6 steps');
}

/**
 * Follows one run twice at once, a clean follower and one whose attach (or ssh) is killed after
 * every 2 new events, 3 times; both must equal events.jsonl exactly. Returns the clean stream.
 */
export async function followCleanAndKilled(
  target: Target,
  runDir: string,
  note: (msg: string) => void,
): Promise<Followed> {
  const [clean, killed] = await Promise.all([follow(target, runDir), follow(target, runDir, { every: 2, times: 3 })]);
  assertComplete(clean, runDir);
  assert.deepEqual(clean.reconnects, []);
  assertComplete(killed, runDir);
  assert.equal(killed.kills, 3);
  assert.equal(killed.reconnects.length, 3, 'one reconnect per kill');
  note(`${killed.events.length} events; reconnected after seq ${killed.reconnects.map((r) => r.since).join(', ')}`);
  return clean;
}

export function runStarted(events: RunEvent[]): RunStartedEvent {
  const e = events.find((x) => x.type === 'run_started');
  assert.ok(e, 'a run_started event');
  return e as RunStartedEvent;
}

/** The detached training process ends shortly after run_finished; wait so temp folders can go. */
export async function waitForExit(pid: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(50);
  }
  throw new Error(`training process ${pid} still alive after ${timeoutMs} ms`);
}

/** Pids of `attach` processes still following `runDir` (Linux /proc). */
function attachProcesses(runDir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    if (argv.includes('attach') && argv.includes(runDir)) pids.push(Number(name));
  }
  return pids;
}

/**
 * No attach is left behind: a killed local attach is gone at once; the remote end of a killed
 * ssh client ends at its next write (a broken pipe), so give it a moment.
 */
export async function assertNoAttachLeft(runDir: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let left = attachProcesses(runDir);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(100);
    left = attachProcesses(runDir);
  }
  assert.deepEqual(left, [], `attach processes still running for ${runDir}`);
}
