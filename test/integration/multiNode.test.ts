// A run on two machines, launched the way the extension does it (src/core/runs/multiNode.ts): the
// runner's `launch` on each node over ssh, one master port, one run id. Both "machines" are this
// host reached through the loopback sshd under two names (127.0.0.1 and localhost), each with its
// own runs folder, so msrun really starts two nodes whose ranks train as one data-parallel run.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { launchNodes, NodeLaunchError, type NodeSite } from '../../src/core/runs/multiNode';
import { sshTarget, type SshTarget, type Target } from '../../src/core/targets/target';
import { fileEvents, makeData, PYTHON, requirePython, RUNNER_DIR, runStarted } from './realRun';
import { startSshd, type Sshd } from './sshd';

let tmp: string;
let sshd: Sshd;
let nodeA: SshTarget;
let nodeB: SshTarget;
let train: string;

before(async () => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-nodes-'));
  sshd = await startSshd();
  const runner = { python: PYTHON, runnerDir: RUNNER_DIR };
  nodeA = sshTarget(sshd.destination, runner, { controlDir: sshd.controlDir });
  nodeB = sshTarget({ ...sshd.destination, host: 'localhost' }, runner, { controlDir: sshd.controlDir });
  train = await makeData(nodeA, path.join(tmp, 'data'));
});
after(async () => {
  await nodeA?.closeShared();
  await nodeB?.closeShared();
  await sshd?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

function writeNodesSpec(file: string, epochs: number): string {
  const spec = {
    name: 'two-nodes',
    data: { train, image_size: 32, batch_size: 8, workers: 1 },
    model: { backbone: 'resnet18', freeze: 'none' },
    train: { epochs, lr: 0.01 },
    amp: { level: 'O0' },
    device: { target: 'CPU', ids: [0], nodes: ['127.0.0.1', 'localhost'] },
  };
  writeFileSync(file, JSON.stringify(spec, null, 2) + '\n');
  return file;
}

interface Status {
  state: string;
  exit_code: number | null;
  pid: number | null;
}
const status = (runDir: string): Status => JSON.parse(readFileSync(path.join(runDir, 'status.json'), 'utf8')) as Status;

async function waitUntil(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

/** Every live process whose command line names `dir` (launcher, msrun, scheduler, ranks). */
function processesOf(dir: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()?.[0];
      if (cmd.includes(dir) && state !== 'Z') out.push(`${pid}: ${cmd.replace(/\0/g, ' ').slice(0, 160)}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

test(
  'two nodes over ssh train as one run: same run id, one port, rank 0 writes every step',
  { timeout: 600_000 },
  async (t) => {
    const spec = writeNodesSpec(path.join(tmp, 'nodes.json'), 2);
    const sites: NodeSite[] = [
      { label: '127.0.0.1', target: nodeA, specPath: spec, runsRoot: path.join(tmp, 'runs-a') },
      { label: 'localhost', target: nodeB, specPath: spec, runsRoot: path.join(tmp, 'runs-b') },
    ];
    const steps: string[] = [];
    const { runs, masterPort } = await launchNodes(sites, { report: (s) => steps.push(s) });
    t.diagnostic(`master port ${masterPort}; ${steps.join(' / ')}`);
    assert.deepEqual(
      runs.map((r) => [r.nodeRank, r.label, path.dirname(r.run_dir)]),
      [
        [0, '127.0.0.1', sites[0].runsRoot],
        [1, 'localhost', sites[1].runsRoot],
      ],
    );
    assert.equal(runs[1].run_id, runs[0].run_id, 'every node takes the master run id');
    const [a, b] = runs.map((r) => r.run_dir);
    await waitUntil(
      'both nodes to end',
      () => !['running', 'starting'].includes(status(a).state) && !['running', 'starting'].includes(status(b).state),
      500_000,
    );

    assert.deepEqual([status(a).state, status(a).exit_code], ['completed', 0], JSON.stringify(fileEvents(a).slice(-1)));
    assert.deepEqual([status(b).state, status(b).exit_code], ['completed', 0], JSON.stringify(fileEvents(b).slice(-1)));
    const events = fileEvents(a);
    const started = runStarted(events);
    assert.equal(
      (started as unknown as { global_batch: number }).global_batch,
      16,
      'batch 8 per device, 1 device, 2 nodes',
    );
    const stepNumbers = events.filter((e) => e.type === 'step').map((e) => (e as unknown as { step: number }).step);
    assert.deepEqual(
      stepNumbers,
      Array.from({ length: started.total_steps }, (_, i) => i + 1),
    );
    // Node 1's rank was global rank 1 of the same cluster (one port): it trained every step with rank 0.
    const verdict = JSON.parse(readFileSync(path.join(b, 'ranks', 'rank-1.json'), 'utf8')) as {
      status: string;
      step: number;
    };
    assert.deepEqual([verdict.status, verdict.step], ['completed', started.total_steps]);
    await waitUntil(
      'no process of either node left',
      () => processesOf(a).length + processesOf(b).length === 0,
      30_000,
    );
  },
);

test(
  'a node that cannot start: the error names it, and the master already started is asked to stop',
  { timeout: 300_000 },
  async (t) => {
    const t0 = Date.now();
    const spec = writeNodesSpec(path.join(tmp, 'fail.json'), 50);
    const blocker = path.join(tmp, 'not-a-folder');
    writeFileSync(blocker, 'a file where node 1 wants its runs folder\n');
    const controls: string[][] = [];
    const watching = (target: Target): Target => ({
      ...target,
      spawnRunner: (args, opts) => {
        if (args[0] === 'control') controls.push([...args]);
        return target.spawnRunner(args, opts);
      },
    });
    const sites: NodeSite[] = [
      { label: '127.0.0.1', target: watching(nodeA), specPath: spec, runsRoot: path.join(tmp, 'runs-f') },
      { label: 'localhost', target: watching(nodeB), specPath: spec, runsRoot: path.join(blocker, 'runs') },
    ];
    let master = '';
    try {
      await assert.rejects(launchNodes(sites), (e: unknown) => {
        assert.ok(e instanceof NodeLaunchError, String(e));
        assert.equal(e.node, 'localhost');
        assert.match(
          e.message,
          /^node 1 \(localhost\) did not start: .+; the 1 node\(s\) already started were asked to stop$/,
        );
        master = e.started[0].run_dir;
        return true;
      });
      t.diagnostic(`launchNodes failed after ${Date.now() - t0} ms`);
      assert.deepEqual(controls, [['control', master, 'stop', '--timeout', '5']], 'the master run got a stop');
      assert.ok(existsSync(path.join(master, 'status.json')));
    } finally {
      // Node 1 never came, so the master waits in msrun's cluster set-up (a stop is taken after it):
      // end it now like a user's second Ctrl-C, which kills everything the launcher started.
      if (master) {
        for (let i = 0; i < 2; i++) {
          const pid = status(master).pid;
          if (pid) {
            try {
              process.kill(pid, 'SIGTERM');
            } catch {
              // already gone
            }
          }
          await sleep(1000);
        }
        await waitUntil('no process of the master left', () => processesOf(master).length === 0, 60_000);
        t.diagnostic(`master gone after ${Date.now() - t0} ms`);
      }
    }
  },
);
