// The air-gapped copy over a real OpenSSH server on 127.0.0.1: a weights file goes to the target's
// weights cache (a folder whose name is full of spaces, quotes and shell syntax), arrives byte for
// byte with its sha256 checked there, is not sent again when it is already there, resumes a partial
// copy, and a file from this machine's cache keeps its cache place so `mindcv:` finds it there. A
// stream cut midway (the link dropped, or the user cancelled) keeps the target's `.part` and the next
// copy sends only the rest; too many bytes are deleted; two different files of one name both stay.
// A hub weight travels with its config.json, and the offline target's run then uses that preprocessing.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { TargetDef } from '../../src/core/targets/model';
import { launchRun } from '../../src/core/targets/runnerCli';
import { sshTarget } from '../../src/core/targets/target';
import {
  copyWeightsToTarget,
  copyWeightsWithConfig,
  fileStamp,
  localCacheWeights,
  sha256File,
  weightsRelPath,
  WeightsCopyError,
  type CopyProblem,
} from '../../src/core/targets/weightsCopy';
import { shellQuote } from '../../src/core/ssh/shellQuote';
import { follow, makeData, PYTHON, requirePython, RUNNER_DIR, runStarted, waitForExit, writeSpec } from './realRun';
import { startSshd, type Sshd } from './sshd';

let tmp: string;
let sshd: Sshd;

before(async () => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-weights-'));
  sshd = await startSshd();
});
after(async () => {
  await sshd?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The WeightsCopyError's problem a promise rejects with. */
async function problemOf(p: Promise<unknown>): Promise<CopyProblem> {
  try {
    await p;
  } catch (e) {
    if (e instanceof WeightsCopyError) return e.problem;
    throw e;
  }
  throw new Error('no WeightsCopyError');
}

/**
 * An `ssh` stand-in script in a folder of its own: it counts its calls (`$n`, and `calls()` here),
 * then runs `body`, shell lines given the folder's quoted path. The wrappers below are its bodies.
 */
function countingSsh(name: string, body: (d: string) => string[]) {
  const dir = path.join(tmp, `wrapper ${name}`);
  mkdirSync(dir);
  const file = path.join(dir, 'ssh');
  const d = shellQuote(dir);
  const count = path.join(dir, 'count');
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      `n=$(( $(cat ${d}/count 2>/dev/null || echo 0) + 1 ))`,
      `echo "$n" > ${d}/count`,
      ...body(d),
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return { dir, path: file, calls: () => (existsSync(count) ? Number(readFileSync(count, 'utf8')) : 0) };
}

/**
 * An `ssh` stand-in that runs the real one: each call's stdin is saved (`input(n)`), and call `cut`
 * (1: the check, 2: the put) goes through `filter` first, a shell pipeline stage such as `head -c N`:
 * the link that drops after N bytes, as the target sees it (the stream ends short).
 */
function sshWrapper(name: string, cut: number, filter: string) {
  const w = countingSsh(name, (d) => [
    `if [ "$n" = ${cut} ]; then ${filter} | tee ${d}/in$n | ssh "$@"; else tee ${d}/in$n | ssh "$@"; fi`,
  ]);
  return { ...w, input: (n: number) => readFileSync(path.join(w.dir, `in${n}`)) };
}

/**
 * An `ssh` stand-in whose call `gate` waits until `open()` is called: the test then knows every call
 * before it has ended, and acts before that call starts. Call `cut.call`, if given, gets only the
 * first `cut.bytes` of its input: a link that drops.
 */
function gateWrapper(name: string, gate: number, cut?: { call: number; bytes: number }) {
  const w = countingSsh(name, (d) => [
    `if [ "$n" = ${gate} ]; then while [ ! -e ${d}/go ]; do sleep 0.05; done; fi`,
    ...(cut ? [`if [ "$n" = ${cut.call} ]; then head -c ${cut.bytes} | ssh "$@"; exit; fi`] : []),
    'exec ssh "$@"',
  ]);
  return { ...w, open: () => writeFileSync(path.join(w.dir, 'go'), '') };
}

/**
 * An `ssh` stand-in whose call `stall` (2: the put) gets the first `bytes` of the stream and then
 * nothing, its stdin left open: a link that dropped without an end, as the target sees it. `stop()`
 * ends the silent writer.
 */
function stallWrapper(name: string, stall: number, bytes: number) {
  const w = countingSsh(name, (d) => [
    `if [ "$n" = ${stall} ]; then`,
    `  mkfifo ${d}/fifo`,
    '  exec 3<&0',
    `  { head -c ${bytes}; exec sleep 60; } <&3 3<&- >${d}/fifo 2>/dev/null &`,
    `  echo $! > ${d}/writer`,
    `  exec ssh "$@" <${d}/fifo 3<&-`,
    'fi',
    'exec ssh "$@"',
  ]);
  return {
    path: w.path,
    stop: () => {
      try {
        process.kill(Number(readFileSync(path.join(w.dir, 'writer'), 'utf8')));
      } catch {
        // not started, or gone
      }
    },
  };
}

function target(): TargetDef {
  return {
    id: 'ssh:loopback',
    kind: 'ssh',
    label: 'loopback',
    source: 'settings',
    description: '',
    runsRoot: path.join(tmp, 'runs'),
    ssh: { dest: sshd.destination, runner: { python: PYTHON }, deploy: false },
  };
}

test(
  'a weights file is copied into the target cache, checked, not re-sent, and resumed',
  { timeout: 120_000 },
  async () => {
    const marker = path.join(tmp, 'injected');
    const cacheRoot = path.join(tmp, `cache "dir" $(touch ${marker}) it's; `);
    const localDir = path.join(tmp, `my weights 'v1' "final"`);
    mkdirSync(localDir);
    const local = path.join(localDir, `resnet 50 "ft" it's.ckpt`);
    const body = randomBytes(3 << 20);
    writeFileSync(local, body);
    const opts = { controlDir: sshd.controlDir, cacheRoot };
    const rel = weightsRelPath(local, path.join(tmp, 'elsewhere'), sha256(body));
    assert.equal(rel, `local/${sha256(body).slice(0, 12)}/resnet 50 "ft" it's.ckpt`);

    const first = await copyWeightsToTarget(target(), local, rel, opts);
    const want = path.join(cacheRoot, 'weights', 'local', sha256(body).slice(0, 12), `resnet 50 "ft" it's.ckpt`);
    assert.equal(first.remotePath, want);
    assert.equal(first.outcome, 'copied');
    assert.equal(first.sent, body.length);
    assert.ok(readFileSync(want).equals(body));
    assert.equal(first.sha256, await sha256File(local));
    assert.ok(!existsSync(marker), 'the folder name was not run by a shell');

    const again = await copyWeightsToTarget(target(), local, rel, opts);
    assert.deepEqual([again.outcome, again.sent], ['current', 0]);

    // An earlier copy broke off after 1 MiB: the next one sends only the rest.
    rmSync(want);
    writeFileSync(want + '.part', body.subarray(0, 1 << 20));
    const resumed = await copyWeightsToTarget(target(), local, rel, opts);
    assert.deepEqual(
      [resumed.outcome, resumed.sent, resumed.resumedFrom],
      ['copied', body.length - (1 << 20), 1 << 20],
    );
    assert.ok(readFileSync(want).equals(body));
    assert.deepEqual(
      readdirSync(path.dirname(want)).sort(),
      [path.basename(want), `${path.basename(want)}.lock`, `${path.basename(want)}.sha256.json`],
      "no .part left; the download record beside the file, and the lock file download.py's downloads share",
    );
    const record = JSON.parse(readFileSync(`${want}.sha256.json`, 'utf8')) as { sha256: string; bytes: number };
    assert.deepEqual([record.sha256, record.bytes], [first.sha256, body.length]);
  },
);

test(
  'a partial copy of another file fails the hash check on arrival and is deleted',
  { timeout: 120_000 },
  async () => {
    const cacheRoot = path.join(tmp, 'cache two');
    const local = path.join(tmp, 'w.ckpt');
    writeFileSync(local, randomBytes(1 << 20));
    const dest = path.join(cacheRoot, 'weights', 'local', 'w.ckpt');
    mkdirSync(path.dirname(dest), { recursive: true });
    writeFileSync(dest + '.part', randomBytes(1000)); // not a prefix of this file
    const p = await problemOf(
      copyWeightsToTarget(target(), local, 'local/w.ckpt', { controlDir: sshd.controlDir, cacheRoot }),
    );
    assert.equal(p.code, 'sha256-mismatch');
    assert.ok(p.code === 'sha256-mismatch' && /^[0-9a-f]{64}$/.test(p.got) && p.want === (await sha256File(local)));
    assert.ok(!existsSync(dest + '.part') && !existsSync(dest));
    // The next attempt starts from zero and succeeds.
    const ok = await copyWeightsToTarget(target(), local, 'local/w.ckpt', { controlDir: sshd.controlDir, cacheRoot });
    assert.equal(ok.outcome, 'copied');
    assert.ok(readFileSync(dest).equals(readFileSync(local)));
  },
);

test(
  'a link that drops midway keeps the partial copy there, and the next copy sends only the rest',
  { timeout: 120_000 },
  async () => {
    const { cacheRoot, local, body, rel, dest } = aFile('cut', 3 << 20);
    const cut = (1 << 20) + 12345;
    const flaky = sshWrapper('cut', 2, `head -c ${cut}`);
    const opts = { controlDir: sshd.controlDir, cacheRoot, retries: 0 };
    const p = await problemOf(copyWeightsToTarget(target(), local, rel, { ...opts, sshPath: flaky.path }));
    assert.deepEqual(p, { code: 'incomplete', part: cut, size: body.length });
    assert.ok(!existsSync(dest), 'nothing in place');
    assert.ok(readFileSync(`${dest}.part`).equals(body.subarray(0, cut)), 'the partial copy stays');

    const starts: number[] = [];
    const resumed = await copyWeightsToTarget(target(), local, rel, {
      ...opts,
      onProgress: (done, _total, phase) => void (phase === 'send' && starts.push(done)),
    });
    assert.deepEqual(
      [resumed.outcome, resumed.resumedFrom, resumed.sent, starts[0], starts.at(-1)],
      ['copied', cut, body.length - cut, cut, body.length],
    );
    assert.equal(await sha256File(dest), sha256(body));
    assert.ok(!existsSync(`${dest}.part`));
  },
);

test('a cut link is tried again from where it stopped, within one copy', { timeout: 120_000 }, async () => {
  const { cacheRoot, local, body, rel } = aFile('retry', 2 << 20);
  const cut = 700_000;
  const flaky = sshWrapper('retry', 2, `head -c ${cut}`);
  const r = await copyWeightsToTarget(target(), local, rel, {
    controlDir: sshd.controlDir,
    cacheRoot,
    sshPath: flaky.path,
    retryDelayMs: 50,
  });
  assert.deepEqual([r.outcome, r.resumedFrom, r.sent], ['copied', 0, body.length]);
  // check, put (cut), check, put: the second put carried only the rest.
  assert.equal(flaky.calls(), 4);
  assert.equal(flaky.input(2).length, cut);
  assert.ok(flaky.input(4).equals(body.subarray(cut)));
  assert.ok(readFileSync(path.join(cacheRoot, 'weights', ...rel.split('/'))).equals(body));
});

test('more bytes than the file has are refused and deleted on arrival', { timeout: 120_000 }, async () => {
  const { cacheRoot, local, body, rel, dest } = aFile('long', 100_000);
  const long = sshWrapper('long', 2, '{ cat; printf extra; }');
  const p = await problemOf(
    copyWeightsToTarget(target(), local, rel, { controlDir: sshd.controlDir, cacheRoot, sshPath: long.path }),
  );
  assert.deepEqual(p, { code: 'too-long', size: body.length });
  assert.ok(!existsSync(dest) && !existsSync(`${dest}.part`));
});

test(
  'a cancelled copy stops the ssh child, keeps the partial copy there, and the next copy resumes it',
  { timeout: 120_000 },
  async () => {
    const { cacheRoot, local, body, rel, dest } = aFile('cancel', 24 << 20);
    // The user cancels once the target holds 2 MiB, watched there: over a slow link (about 4 MB/s), so
    // the copy cannot end first however fast this machine sends (the local progress, reported every
    // 200 ms, let a fast loopback send all 24 MiB before the cancel: CI's flake).
    const slow = slowTarget('cancel');
    const abort = new AbortController();
    const opts = { controlDir: sshd.controlDir, cacheRoot, retryDelayMs: 1000 };
    const watch = setInterval(() => {
      if (existsSync(`${dest}.part`) && statSync(`${dest}.part`).size >= 2 << 20) abort.abort();
    }, 20);
    let p: CopyProblem;
    try {
      p = await problemOf(copyWeightsToTarget(slow, local, rel, { ...opts, signal: abort.signal }));
    } finally {
      clearInterval(watch);
    }
    assert.deepEqual(p, { code: 'cancelled' });
    assert.ok(existsSync(`${dest}.part`), 'the partial copy stays');
    assert.ok(!existsSync(dest));

    // The target's side sees its stdin end and keeps what came; the next copy waits for it to let go.
    const starts: number[] = [];
    const resumed = await copyWeightsToTarget(slow, local, rel, {
      ...opts,
      onProgress: (done, _total, phase) => void (phase === 'send' && starts.push(done)),
    });
    assert.equal(resumed.outcome, 'copied');
    assert.ok(resumed.resumedFrom >= 2 << 20 && resumed.resumedFrom < body.length, String(resumed.resumedFrom));
    assert.equal(resumed.sent, body.length - resumed.resumedFrom);
    assert.ok(starts.includes(resumed.resumedFrom), 'the put started at the partial copy');
    assert.equal(statSync(dest).size, body.length);
    assert.equal(await sha256File(dest), sha256(body));
  },
);

/**
 * The loopback target behind a slow link: its Python reads stdin through a stage that passes about
 * 4 MB/s (64 KiB every 16 ms) and ends when the link does.
 */
function slowTarget(name: string): TargetDef {
  const dir = path.join(tmp, `slow ${name}`);
  mkdirSync(dir);
  const file = path.join(dir, 'python');
  const py = shellQuote(PYTHON);
  const stage = [
    'import os, time',
    'while True:',
    '    b = os.read(0, 1 << 16)',
    '    if not b:',
    '        break',
    '    while b:',
    '        b = b[os.write(1, b):]',
    '    time.sleep(0.016)',
  ].join('\n');
  writeFileSync(file, ['#!/bin/sh', `${py} -c ${shellQuote(stage)} | ${py} "$@"`, ''].join('\n'), { mode: 0o755 });
  const def = target();
  return { ...def, ssh: { ...def.ssh!, runner: { python: file } } };
}

/** A local file of `bytes` random bytes (`<name>.ckpt`), and where a copy of it lands in the target cache
 * `cache <name>`: `rel` under its weights folder, `dest` in full. */
function aFile(name: string, bytes: number) {
  const cacheRoot = path.join(tmp, `cache ${name}`);
  const local = path.join(tmp, `${name}.ckpt`);
  const body = randomBytes(bytes);
  writeFileSync(local, body);
  const rel = weightsRelPath(local, path.join(tmp, 'elsewhere'), sha256(body));
  return { cacheRoot, local, body, rel, dest: path.join(cacheRoot, 'weights', ...rel.split('/')) };
}

/** A process that holds an exclusive flock on `file` (created if missing) until it is killed: another
 * copy's process, or a download on the target. Resolves once it holds the lock. */
async function holdLock(file: string): Promise<ChildProcess> {
  const holder = spawn(
    PYTHON,
    [
      '-c',
      'import fcntl, os, sys, time\nfd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\nfcntl.flock(fd, fcntl.LOCK_EX)\nprint("locked", flush=True)\ntime.sleep(60)',
      file,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise((resolve) => holder.stdout!.once('data', resolve));
  return holder;
}

test(
  "a copy that waited on another copy's busy .part counts only what it sent itself",
  { timeout: 120_000 },
  async () => {
    const { cacheRoot, local, body, rel, dest } = aFile('busy-then', 200_000);
    mkdirSync(path.dirname(dest), { recursive: true });
    writeFileSync(`${dest}.part`, body.subarray(0, 50_000));
    const holder = await holdLock(`${dest}.part`);
    // Calls: check, put (busy), then the retry's check, held at the gate while the other copy goes on.
    const gate = gateWrapper('busy-then', 3);
    try {
      const copy = copyWeightsToTarget(target(), local, rel, {
        controlDir: sshd.controlDir,
        cacheRoot,
        sshPath: gate.path,
        retryDelayMs: 50,
      });
      const deadline = Date.now() + 60_000;
      while (gate.calls() < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(gate.calls(), 3, 'the put was refused busy and the copy tried again');
      appendFileSync(`${dest}.part`, body.subarray(50_000, 80_000)); // the other copy's last bytes
      holder.kill();
      gate.open();
      const r = await copy;
      // It used to say it resumed from 50,000 and sent 150,000: the other copy's 30,000 counted as its own.
      assert.deepEqual([r.outcome, r.resumedFrom, r.sent], ['copied', 80_000, body.length - 80_000]);
      assert.ok(readFileSync(dest).equals(body));
    } finally {
      holder.kill();
    }
  },
);

test(
  "a wait on another copy's busy .part is no try of this copy's link: a cut after it is tried again",
  { timeout: 120_000 },
  async () => {
    const { cacheRoot, local, body, rel, dest } = aFile('busy-cut', 400_000);
    mkdirSync(path.dirname(dest), { recursive: true });
    writeFileSync(`${dest}.part`, body.subarray(0, 50_000));
    const holder = await holdLock(`${dest}.part`);
    // Calls: check, put (busy), check (held until the other copy is gone), put (cut), check, put.
    const gate = gateWrapper('busy-cut', 3, { call: 4, bytes: 150_000 });
    try {
      const copy = copyWeightsToTarget(target(), local, rel, {
        controlDir: sshd.controlDir,
        cacheRoot,
        sshPath: gate.path,
        retryDelayMs: 50,
        retries: 3,
      });
      const deadline = Date.now() + 60_000;
      while (gate.calls() < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      holder.kill();
      await new Promise((r) => holder.once('exit', r));
      gate.open();
      // It used to give up at the cut: the busy wait had taken the "moved forward" mark of its own tries.
      const r = await copy;
      assert.deepEqual([r.outcome, r.resumedFrom, r.sent], ['copied', 50_000, body.length - 50_000]);
      assert.equal(gate.calls(), 6);
      assert.ok(readFileSync(dest).equals(body));
    } finally {
      holder.kill();
    }
  },
);

test(
  "a partial copy another copy's process still writes is reported busy, then resumed",
  { timeout: 120_000 },
  async () => {
    const { cacheRoot, local, body, rel, dest } = aFile('busy', 200_000);
    mkdirSync(path.dirname(dest), { recursive: true });
    writeFileSync(`${dest}.part`, body.subarray(0, 50_000));
    // An earlier put whose link dropped and which has not noticed yet: it holds the lock.
    const holder = await holdLock(`${dest}.part`);
    try {
      const opts = { controlDir: sshd.controlDir, cacheRoot };
      assert.deepEqual(await problemOf(copyWeightsToTarget(target(), local, rel, { ...opts, retries: 0 })), {
        code: 'busy',
      });
      assert.ok(readFileSync(`${dest}.part`).equals(body.subarray(0, 50_000)), 'the partial copy is untouched');
      holder.kill();
      const r = await copyWeightsToTarget(target(), local, rel, { ...opts, retryDelayMs: 100 });
      assert.deepEqual([r.outcome, r.resumedFrom], ['copied', 50_000]);
      assert.ok(readFileSync(dest).equals(body));
    } finally {
      holder.kill();
    }
  },
);

test(
  "a download of the same file on the target (download.py's lock) makes the copy busy; after it the copy takes over the .part",
  { timeout: 120_000 },
  async () => {
    const { cacheRoot, local, body, rel, dest } = aFile('downloading', 120_000);
    mkdirSync(path.dirname(dest), { recursive: true });
    writeFileSync(`${dest}.part`, body.subarray(0, 30_000));
    writeFileSync(`${dest}.part.json`, JSON.stringify({ url: 'http://mirror/x.ckpt', validator: '"e1"' }));
    const holder = await holdLock(`${dest}.lock`);
    try {
      const opts = { controlDir: sshd.controlDir, cacheRoot };
      assert.deepEqual(await problemOf(copyWeightsToTarget(target(), local, rel, { ...opts, retries: 0 })), {
        code: 'busy',
      });
      assert.ok(readFileSync(`${dest}.part`).equals(body.subarray(0, 30_000)), "the download's .part is untouched");
      holder.kill();
      const r = await copyWeightsToTarget(target(), local, rel, { ...opts, retryDelayMs: 100 });
      assert.equal(r.outcome, 'copied');
      assert.ok(readFileSync(dest).equals(body));
      assert.equal(
        existsSync(`${dest}.part.json`),
        false,
        "the download's record of where its .part came from is gone",
      );
    } finally {
      holder.kill();
    }
  },
);

test('two different files of one name go to two places, and both stay', { timeout: 120_000 }, async () => {
  const cacheRoot = path.join(tmp, 'cache same name');
  const a = path.join(tmp, 'run a', 'model.safetensors');
  const b = path.join(tmp, 'run b', 'model.safetensors');
  mkdirSync(path.dirname(a));
  mkdirSync(path.dirname(b));
  writeFileSync(a, randomBytes(5000));
  writeFileSync(b, randomBytes(6000));
  const elsewhere = path.join(tmp, 'elsewhere');
  const relA = weightsRelPath(a, elsewhere, await sha256File(a));
  const relB = weightsRelPath(b, elsewhere, await sha256File(b));
  assert.notEqual(relA, relB);
  const opts = { controlDir: sshd.controlDir, cacheRoot };
  const ra = await copyWeightsToTarget(target(), a, relA, opts);
  const rb = await copyWeightsToTarget(target(), b, relB, opts);
  assert.notEqual(ra.remotePath, rb.remotePath);
  assert.deepEqual(
    [path.basename(ra.remotePath), path.basename(rb.remotePath)],
    ['model.safetensors', 'model.safetensors'],
  );
  assert.ok(readFileSync(ra.remotePath).equals(readFileSync(a)));
  assert.ok(readFileSync(rb.remotePath).equals(readFileSync(b)));
  // The same file again is already there.
  assert.equal((await copyWeightsToTarget(target(), a, relA, opts)).outcome, 'current');
});

test('a file from the local cache keeps its place in the target cache', () => {
  const cache = path.join(tmp, 'local cache', 'weights');
  const any = '0'.repeat(64);
  assert.equal(
    weightsRelPath(path.join(cache, 'mindcv', 'resnet50-e0733ab8.ckpt'), cache, any),
    'mindcv/resnet50-e0733ab8.ckpt',
  );
  assert.equal(
    weightsRelPath(path.join(cache, 'hf-hub', 'timm', 'resnet50.a1_in1k', 'main', 'model.safetensors'), cache, any),
    'hf-hub/timm/resnet50.a1_in1k/main/model.safetensors',
  );
});

/** A timm-layout ResNet-18 state dict (the runner's torch-layout names mapped back), random values. */
const TIMM_RESNET18 = String.raw`
import sys, numpy as np
from safetensors.numpy import save_file
from ascend_finetune.models.net import TransferNet
back = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean", "moving_variance": "running_var"}
rng, out = np.random.default_rng(0), {}
for p in TransferNet("resnet18", 4, 0, "torch").backbone.get_parameters():
    mod, _, leaf = p.name.removeprefix("backbone.").replace(".down_sample_layer.", ".downsample.").rpartition(".")
    leaf = back.get(leaf, leaf)
    v = np.ones(p.shape) if leaf in ("running_var", "weight") and len(p.shape) == 1 else rng.normal(0, 0.05, p.shape)
    out[mod + "." + leaf] = v.astype(np.float32)
save_file(out, sys.argv[1])
`;

test(
  "a hub weight goes with its config.json, and the air-gapped target runs with the weights' own preprocessing",
  { timeout: 420_000 },
  async () => {
    // This machine's cache as fetch-weights leaves it: the weights and their config beside them.
    const localWeights = localCacheWeights({ ASCEND_FINETUNE_CACHE: path.join(tmp, 'here cache') }, '/nonexistent');
    const folder = path.join(localWeights, 'hf-hub', 'timm', 'resnet18.a1_in1k', 'main');
    mkdirSync(folder, { recursive: true });
    const file = path.join(folder, 'model.safetensors');
    execFileSync(PYTHON, ['-c', TIMM_RESNET18, file], { env: { ...process.env, PYTHONPATH: RUNNER_DIR } });
    // Values no preset has, so run_started shows where they came from.
    const cfg = {
      architecture: 'resnet18',
      pretrained_cfg: {
        mean: [0.5, 0.4, 0.3],
        std: [0.2, 0.25, 0.3],
        crop_pct: 0.8,
        interpolation: 'bilinear',
        crop_mode: 'center',
      },
    };
    writeFileSync(path.join(folder, 'config.json'), JSON.stringify(cfg));

    // The target: its own cache, and no hub (HF_HUB_OFFLINE): only what was copied can be used.
    const targetCache = path.join(tmp, 'target cache');
    const runner = {
      python: PYTHON,
      runnerDir: RUNNER_DIR,
      setup: [
        `export ASCEND_FINETUNE_CACHE=${shellQuote(targetCache)} HF_HUB_OFFLINE=1 HF_ENDPOINT=http://127.0.0.1:9`,
      ],
    };
    const def: TargetDef = { ...target(), ssh: { dest: sshd.destination, runner, deploy: false } };
    const rel = weightsRelPath(file, localWeights, await sha256File(file));
    assert.equal(rel, 'hf-hub/timm/resnet18.a1_in1k/main/model.safetensors');
    const copied = await copyWeightsWithConfig(def, file, rel, { controlDir: sshd.controlDir });
    const there = path.join(targetCache, 'weights', 'hf-hub', 'timm', 'resnet18.a1_in1k', 'main');
    assert.equal(copied.remotePath, path.join(there, 'model.safetensors'));
    assert.ok(typeof copied.config === 'object', 'the config went too');
    assert.equal(copied.config.remotePath, path.join(there, 'config.json'));
    assert.equal(copied.config.sha256, await sha256File(path.join(folder, 'config.json')));
    assert.ok(readFileSync(path.join(there, 'config.json')).equals(readFileSync(path.join(folder, 'config.json'))));
    // Both already there: nothing is sent again.
    const again = await copyWeightsWithConfig(def, file, rel, { controlDir: sshd.controlDir });
    assert.deepEqual([again.outcome, typeof again.config === 'object' && again.config.outcome], ['current', 'current']);

    // The run on the target names the source, asks nobody and takes mean, std and crop from the config.
    const ssh = sshTarget(sshd.destination, runner, { controlDir: sshd.controlDir });
    try {
      const data = await makeData(ssh, path.join(tmp, 'data'));
      const spec = path.join(tmp, 'hub.json');
      writeSpec(spec, data);
      const doc = JSON.parse(readFileSync(spec, 'utf8')) as {
        model: Record<string, unknown>;
        train: { epochs: number };
      };
      doc.model = { backbone: 'resnet18', pretrained: 'hf-hub:timm/resnet18.a1_in1k', freeze: 'backbone' };
      doc.train.epochs = 1;
      writeFileSync(spec, JSON.stringify(doc));
      const run = await launchRun(ssh, spec, path.join(tmp, 'runs'));
      try {
        const got = await follow(ssh, run.run_dir);
        const started = runStarted(got.events);
        const p = started.preprocess;
        assert.ok(p, 'run_started.preprocess');
        assert.equal(p.source, 'hub_config', JSON.stringify(p));
        assert.deepEqual([p.crop_pct, p.interpolation], [0.8, 'bilinear']);
        assert.deepEqual(
          p.mean.map((x) => Math.round(x * 100) / 100),
          [127.5, 102, 76.5],
        );
        const codes = got.events.filter((e) => e.type === 'warning').map((e) => (e as { code?: string }).code);
        assert.ok(!codes.includes('preprocess_config_missing'), codes.join(', '));
        assert.equal((got.events.at(-1) as { status?: string }).status, 'completed');
      } finally {
        await waitForExit(run.pid);
      }
    } finally {
      await ssh.closeShared();
    }
  },
);

test(
  'a hub weight whose config this machine lacks is copied and reported as missing its config',
  { timeout: 120_000 },
  async () => {
    const localWeights = path.join(tmp, 'bare cache', 'weights');
    const folder = path.join(localWeights, 'hf-hub', 'timm', 'vit_x.tag', 'main');
    mkdirSync(folder, { recursive: true });
    const file = path.join(folder, 'model.safetensors');
    writeFileSync(file, randomBytes(1000));
    const cacheRoot = path.join(tmp, 'cache three');
    const r = await copyWeightsWithConfig(target(), file, weightsRelPath(file, localWeights, await sha256File(file)), {
      controlDir: sshd.controlDir,
      cacheRoot,
    });
    assert.deepEqual([r.outcome, r.config], ['copied', 'missing']);
    // A plain file has no config to go with it.
    const plain = await copyWeightsWithConfig(target(), file, 'local/model.safetensors', {
      controlDir: sshd.controlDir,
      cacheRoot,
    });
    assert.equal(plain.config, undefined);
  },
);

test(
  'a put whose link goes silent ends after the idle timeout there, keeps every byte that came and lets go of its locks',
  { timeout: 120_000 },
  async () => {
    const { cacheRoot, local, body, rel, dest } = aFile('stalled', 3 << 20);
    const n = (1 << 20) + 777; // not a multiple of any read size: each byte is written as it arrives
    const silent = stallWrapper('stalled', 2, n);
    const opts = { controlDir: sshd.controlDir, cacheRoot, idleTimeoutS: 2 };
    try {
      const t0 = Date.now();
      const p = await problemOf(
        copyWeightsToTarget(target(), local, rel, { ...opts, retries: 0, sshPath: silent.path }),
      );
      const took = Date.now() - t0;
      assert.deepEqual(p, { code: 'incomplete', part: n, size: body.length });
      assert.ok(took < 20_000, `the put ended after ${took} ms, not when the writer did`);
      assert.ok(readFileSync(`${dest}.part`).equals(body.subarray(0, n)), 'every byte that came is kept');
    } finally {
      silent.stop();
    }
    // Nothing holds the locks any more: the next copy resumes at once instead of finding it busy.
    const r = await copyWeightsToTarget(target(), local, rel, { ...opts, retries: 0 });
    assert.deepEqual([r.outcome, r.resumedFrom, r.sent], ['copied', n, body.length - n]);
    assert.ok(readFileSync(dest).equals(body));
  },
);

test(
  "a symlinked folder in the target's cache is followed when this user made it, refused when another did",
  { timeout: 120_000 },
  async () => {
    const { local, body, rel } = aFile('linked', 50_000);

    // The user's own link (a bigger disk): followed, like the runner's download.
    const own = path.join(tmp, 'cache own link');
    const disk = path.join(tmp, 'bigger disk weights');
    mkdirSync(own);
    mkdirSync(disk);
    symlinkSync(path.relative(own, disk), path.join(own, 'weights')); // relative to the link's folder
    assert.equal(lstatSync(path.join(own, 'weights')).uid, process.getuid!());
    const r = await copyWeightsToTarget(target(), local, rel, { controlDir: sshd.controlDir, cacheRoot: own });
    assert.equal(r.outcome, 'copied');
    assert.equal(r.remotePath, path.join(own, 'weights', ...rel.split('/')));
    assert.ok(readFileSync(path.join(disk, ...rel.split('/'))).equals(body));

    // A link another user planted in a shared cache: refused, nothing written through it.
    if (process.getuid?.() !== 0) return; // only root can give a link to another owner
    const shared = path.join(tmp, 'cache shared');
    const planted = path.join(tmp, 'planted target');
    mkdirSync(path.join(shared, 'weights'), { recursive: true });
    mkdirSync(planted);
    const link = path.join(shared, 'weights', 'local');
    symlinkSync(planted, link);
    lchownSync(link, 12345, 12345);
    for (const retries of [0, 3]) {
      const p = await problemOf(
        copyWeightsToTarget(target(), local, rel, { controlDir: sshd.controlDir, cacheRoot: shared, retries }),
      );
      assert.deepEqual(p, { code: 'unsafe', path: link, uid: 12345 });
    }
    assert.deepEqual(readdirSync(planted), [], 'nothing written through it');
    assert.deepEqual(readdirSync(path.join(shared, 'weights')), ['local']);
  },
);

test(
  'a local file that grows while it is copied: only the size hashed is sent; one that changed after hashing is refused',
  { timeout: 120_000 },
  async () => {
    const { cacheRoot, local, body, rel, dest } = aFile('growing', 2 << 20);
    // A resumed copy whose file grows once the send starts: the .part is not thrown away as too long.
    mkdirSync(path.dirname(dest), { recursive: true });
    writeFileSync(`${dest}.part`, body.subarray(0, 500_000));
    let grown = false;
    const r = await copyWeightsToTarget(target(), local, rel, {
      controlDir: sshd.controlDir,
      cacheRoot,
      retries: 0,
      onProgress: (_done, _total, phase) => {
        if (phase === 'send' && !grown) {
          grown = true;
          appendFileSync(local, randomBytes(300_000)); // before the stream's first read
        }
      },
    });
    assert.ok(grown);
    assert.deepEqual([r.outcome, r.resumedFrom, r.sent], ['copied', 500_000, body.length - 500_000]);
    assert.ok(readFileSync(dest).equals(body), 'the file as hashed, not a byte more');

    // Hashed, then changed before the copy: refused here, nothing sent.
    const other = path.join(tmp, 'changed.ckpt');
    writeFileSync(other, randomBytes(100_000));
    const stamp = await fileStamp(other);
    const sha = await sha256File(other);
    appendFileSync(other, 'more');
    const never = sshWrapper('changed', 0, 'cat');
    const p = await problemOf(
      copyWeightsToTarget(target(), other, 'local/changed.ckpt', {
        controlDir: sshd.controlDir,
        cacheRoot,
        sha256: sha,
        stamp,
        sshPath: never.path,
      }),
    );
    assert.deepEqual(p, { code: 'changed', file: other });
    assert.ok(!existsSync(path.join(path.dirname(never.path), 'count')), 'ssh was not run');
  },
);
