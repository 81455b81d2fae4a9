// How to run:  node --import tsx bench/stream_latency.ts [--events 1000] [--interval-ms 10]
// (needs .venv from scripts/setup-python.sh, and /usr/sbin/sshd from Debian's openssh-server)
//
// Time from the runner writing a `step` event (the event's own `t`) to the core's followRun
// listener receiving it, on this machine and through a real sshd on 127.0.0.1. A small Python
// writer appends the events with the runner's own EventLog at a steady interval; the listener
// is attached before the first step so no event is read as a backlog. Prints one line per path
// with p50/p95 and the ratio of p95 to its target (100 ms local, 250 ms over ssh).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { followRun } from '../src/core/runs/attach';
import { localTarget, sshTarget, type Target } from '../src/core/targets/target';
import { startSshd } from '../test/integration/sshd';

const ROOT = path.resolve(__dirname, '..');
const PYTHON = path.join(ROOT, '.venv', 'bin', 'python');

// Writes a `warning` first (so the reader is known to be following), waits for a line on stdin,
// then N steps every INTERVAL ms, then run_finished.
const WRITER = `
import os, sys, time
sys.path.insert(0, 'runner')
from ascend_finetune.events import EventLog
from ascend_finetune.rundir import initial_status
run_dir, n, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000
initial_status(run_dir, os.getpid())
log = EventLog(os.path.join(run_dir, 'events.jsonl'))
log.emit('warning', code='bench', message='writer ready', details=None)
sys.stdin.readline()
next_at = time.monotonic()
for i in range(n):
    log.emit('step', epoch=1, step=i + 1, loss=1.0, lr=0.01, loss_scale=None, overflow=False, step_ms=interval * 1000, img_per_s=None)
    next_at += interval
    time.sleep(max(0.0, next_at - time.monotonic()))
log.emit('run_finished', status='completed', error=None, best=None, final=None)
log.close()
`;

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** Latencies in ms of every step event, as the listener sees them. */
async function measure(target: Target, n: number, intervalMs: number): Promise<number[]> {
  const runDir = mkdtempSync(path.join(tmpdir(), 'aft-bench-run-'));
  const writer = spawn(PYTHON, ['-c', WRITER, runDir, String(n), String(intervalMs)], {
    cwd: ROOT,
    stdio: ['pipe', 'inherit', 'inherit'],
  });
  const latencies: number[] = [];
  try {
    for await (const e of followRun({ runner: target, runDir })) {
      const now = (performance.timeOrigin + performance.now()) / 1000;
      if (e.type === 'warning') writer.stdin.end('go\n');
      else if (e.type === 'step') latencies.push((now - e.t) * 1000);
    }
  } finally {
    writer.kill();
    rmSync(runDir, { recursive: true, force: true });
  }
  if (latencies.length !== n) throw new Error(`got ${latencies.length} of ${n} step events`);
  return latencies;
}

function pct(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

function report(name: string, lat: number[], targetMs: number): void {
  const p95 = pct(lat, 0.95);
  console.log(
    `stream_latency ${name}: ${lat.length} events  p50 ${pct(lat, 0.5).toFixed(1)} ms  p95 ${p95.toFixed(1)} ms  ` +
      `max ${Math.max(...lat).toFixed(1)} ms  p95/target ${(p95 / targetMs).toFixed(2)} (target ${targetMs} ms)`,
  );
}

async function main(): Promise<void> {
  const n = arg('--events', 1000);
  const intervalMs = arg('--interval-ms', 10);
  const runner = { python: PYTHON, runnerDir: path.join(ROOT, 'runner') };
  report('local', await measure(localTarget(runner), n, intervalMs), 100);

  const sshd = await startSshd();
  const target = sshTarget(sshd.destination, runner, { controlDir: sshd.controlDir });
  try {
    report('ssh  ', await measure(target, n, intervalMs), 250);
  } finally {
    await target.closeShared();
    await sshd.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
