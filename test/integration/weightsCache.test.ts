// The Start wizard's weights cache check and download on pick, with the real runner here and over a
// real OpenSSH server on 127.0.0.1 (sshd.ts): `weights-status` says missing, `fetch-weights
// --progress` downloads from a weights host on 127.0.0.1 (mindcv's URL layout) with progress, and
// `weights-status` then says cached with the file's size; a cancelled download keeps its `.part`.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { shellQuote } from '../../src/core/ssh/shellQuote';
import { sshTarget, type SshTarget } from '../../src/core/targets/target';
import { FetchCancelled, fetchWeights, weightsCacheListing } from '../../src/core/targets/weightsCache';
import { PYTHON, requirePython, RUNNER_DIR } from './realRun';
import { startSshd, type Sshd } from './sshd';

const R18 = '/resnet/resnet18-1e65cd21.ckpt'; // the catalog's path for mindcv:resnet18
const R50 = '/resnet/resnet50-e0733ab8.ckpt';
const body = randomBytes(3 << 20);
let tmp: string;
let sshd: Sshd;
let ssh: SshTarget | undefined;
let host: Server;
let base: string;

before(async () => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-wcache-'));
  // R18 is served whole; R50 sends its first half and then stalls, for the cancel.
  host = createServer((req, res) => {
    if (req.url === R18) return res.writeHead(200, { 'Content-Length': body.length }).end(body);
    if (req.url === R50)
      return void res.writeHead(200, { 'Content-Length': body.length }).write(body.subarray(0, 1 << 20));
    res.writeHead(404, { 'Content-Length': 0 }).end();
  });
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
  sshd = await startSshd();
});
after(async () => {
  await ssh?.closeShared();
  host?.closeAllConnections();
  host?.close();
  await sshd?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

async function listFetchList(runner: Parameters<typeof weightsCacheListing>[0], cache: string): Promise<void> {
  const before = await weightsCacheListing(runner);
  assert.equal(before.get('mindcv:resnet18')?.state, 'missing');
  assert.ok(before.size >= 10, 'the whole catalog is listed');
  const seen: [number, number | null][] = [];
  const got = await fetchWeights(runner, 'mindcv:resnet18', (d, t) => seen.push([d, t])).result;
  const file = path.join(cache, 'weights', 'mindcv', 'resnet18-1e65cd21.ckpt');
  assert.equal(got.path, file);
  assert.equal(got.cached, false);
  assert.ok(readFileSync(file).equals(body));
  assert.deepEqual(seen[0], [0, body.length]);
  assert.deepEqual(seen.at(-1), [body.length, body.length]);
  const now = await weightsCacheListing(runner, ['mindcv:resnet18', 'mindcv:resnet50']);
  assert.deepEqual(
    [now.get('mindcv:resnet18')?.state, now.get('mindcv:resnet18')?.bytes, now.get('mindcv:resnet18')?.path],
    ['cached', body.length, file],
  );
  assert.equal(now.get('mindcv:resnet50')?.state, 'missing');
  assert.equal(now.size, 2);
}

test('this machine: missing, downloaded with progress, then cached; a cancel keeps the part', async () => {
  const cache = path.join(tmp, 'local cache');
  const runner = {
    python: PYTHON,
    runnerDir: RUNNER_DIR,
    env: { ASCEND_FINETUNE_CACHE: cache, ASCEND_FINETUNE_WEIGHTS_URL: base },
  };
  await listFetchList(runner, cache);

  let run: ReturnType<typeof fetchWeights> | undefined = undefined;
  const half = new Promise<void>((resolve) => {
    run = fetchWeights(runner, 'mindcv:resnet50', (done) => done >= 1 << 20 && resolve());
  });
  await half;
  run!.cancel();
  await assert.rejects(run!.result, FetchCancelled);
  const part = path.join(cache, 'weights', 'mindcv', 'resnet50-e0733ab8.ckpt.part');
  assert.equal(statSync(part).size, 1 << 20, 'the partial download is kept for the run to resume');
  const after = await weightsCacheListing(runner, ['mindcv:resnet50']);
  assert.deepEqual(
    [after.get('mindcv:resnet50')?.state, after.get('mindcv:resnet50')?.partBytes],
    ['missing', 1 << 20],
  );
});

test('over ssh: the same listing and download on the target', { timeout: 120_000 }, async () => {
  const cache = path.join(tmp, `ssh cache "q" it's`);
  ssh = sshTarget(
    sshd.destination,
    {
      python: PYTHON,
      runnerDir: RUNNER_DIR,
      setup: [`export ASCEND_FINETUNE_CACHE=${shellQuote(cache)} ASCEND_FINETUNE_WEIGHTS_URL=${shellQuote(base)}`],
    },
    { controlDir: sshd.controlDir },
  );
  await listFetchList(ssh, cache);
  assert.ok(existsSync(path.join(cache, 'weights', 'mindcv', 'resnet18-1e65cd21.ckpt.sha256.json')));
});
