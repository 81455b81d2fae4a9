// Preview Data and Classify with Checkpoint's core (src/core/preview/) against the REAL runner over a
// real OpenSSH server on 127.0.0.1: thumbnails of a class folder whose name is full of shell syntax
// (argv quoted once by the ssh layer: nothing in it runs), a cancel that ends the runner on the far
// side too, and `predict` over ssh where a broken file keeps its own error beside a good answer, and
// the answered image comes back as a thumbnail made on the far side.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { predictFiles, PreviewCancelled, runPreview } from '../../src/core/preview/client';
import { answeredFiles, targetImages } from '../../src/core/preview/images';
import { toClassifyView, toPreviewView } from '../../src/core/preview/model';
import { runnerArgs, runRunner } from '../../src/core/targets/runnerCli';
import { localTarget, sshTarget, type SshTarget } from '../../src/core/targets/target';
import { PYTHON, requirePython, RUNNER_DIR } from './realRun';
import { startSshd, type Sshd } from './sshd';

/** Polls `ok` until it holds or `ms` pass (then fails with `detail()`). */
async function waitFor(what: string, ok: () => boolean, ms: number, detail: () => string): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`${what}: still not after ${ms} ms\n${detail()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const ODD = "red $(touch PWNED) `touch PWNED2`; it's & | circle";

let tmp: string;
let sshd: Sshd;
let ssh: SshTarget;
let data: string;

before(async () => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-preview-'));
  sshd = await startSshd();
  // `cd /`: a PWNED file would land there or in the home; the test looks in both and in the data.
  ssh = sshTarget(
    sshd.destination,
    { python: PYTHON, runnerDir: RUNNER_DIR, setup: ['cd /'] },
    { controlDir: sshd.controlDir },
  );
  data = path.join(tmp, 'data');
  await runRunner(localTarget({ python: PYTHON, runnerDir: RUNNER_DIR }), [
    'make-demo-data',
    data,
    '--per-class',
    '8',
    '--size',
    '32',
  ]);
  renameSync(path.join(data, 'red circle'), path.join(data, ODD));
});

after(async () => {
  await ssh?.closeShared();
  await sshd?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test(
  'preview over ssh: the odd class folder is a class, its thumbnails come back, nothing in its name runs',
  { timeout: 300_000 },
  async () => {
    const r = runPreview(ssh, data, { samples: 2 });
    const v = toPreviewView(await r.result);
    assert.deepEqual(
      v.classes.map((c) => c.name).sort(),
      ['blue triangle', 'green square', ODD, 'yellow cross'].sort(),
    );
    const odd = v.thumbnails.classes.find((c) => c.name === ODD);
    assert.ok(
      odd && odd.samples.length === 2,
      JSON.stringify(v.thumbnails.classes.map((c) => [c.name, c.samples.length])),
    );
    for (const s of odd.samples) {
      assert.equal(path.dirname(s.file), path.join(data, ODD), 'a sample of its own class folder');
      for (const img of [s.original, s.train, s.eval]) {
        const bytes = Buffer.from(img ?? '', 'base64');
        assert.deepEqual([...bytes.subarray(0, 3)], [0xff, 0xd8, 0xff], 'a JPEG');
      }
    }
    for (const dir of ['/', process.env.HOME ?? '/root', data]) {
      assert.equal(existsSync(path.join(dir, 'PWNED')), false, `nothing ran in ${dir}`);
      assert.equal(existsSync(path.join(dir, 'PWNED2')), false, `nothing ran in ${dir}`);
    }
  },
);

test(
  'cancel over ssh: the preview rejects as cancelled and the runner on the far side ends',
  { timeout: 300_000 },
  async () => {
    // 1200 images: the runner reports progress (from 1000), so the cancel comes while it reads.
    const big = path.join(tmp, 'big');
    execFileSync(PYTHON, [
      '-c',
      `import os, sys
from PIL import Image
for c in range(2):
    d = os.path.join(sys.argv[1], "c%d" % c)
    os.makedirs(d)
    for i in range(600):
        Image.new("RGB", (8, 8), (c * 120, i % 256, i // 256)).save(os.path.join(d, "%04d.png" % i))`,
      big,
    ]);
    let run: ReturnType<typeof runPreview> | undefined = undefined;
    let seen = 0;
    run = runPreview(ssh, big, { samples: 0, onProgress: () => seen++ === 0 && run?.cancel() });
    await assert.rejects(run.result, PreviewCancelled);
    const previews = () =>
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes('ascend_finetune preview') && l.includes(big));
    // The ssh client is gone at once; the far side's runner ends when its session does.
    await waitFor(
      'the remote preview to end',
      () => previews().length === 0,
      60_000,
      () => previews().join('\n'),
    );
  },
);

test(
  'predict over ssh: an image in the odd class folder is answered, a broken file has its own error',
  { timeout: 600_000 },
  async () => {
    const spec = path.join(tmp, 'spec.json');
    writeFileSync(
      spec,
      JSON.stringify({
        name: 'pv',
        data: { train: data, image_size: 32, batch_size: 8, workers: 2 },
        model: { backbone: 'resnet18', freeze: 'none' },
        train: { epochs: 1 },
        amp: { level: 'O0' },
        device: { target: 'CPU' },
      }),
    );
    const runDir = path.join(tmp, 'runs', 'r1');
    await runRunner(localTarget({ python: PYTHON, runnerDir: RUNNER_DIR }), runnerArgs.train(spec, runDir), {
      timeoutMs: 300_000,
    });
    const broken = path.join(tmp, 'not an image $(touch PWNED).jpg');
    writeFileSync(broken, 'text');
    const image = path.join(data, ODD, '0003.png');
    const manifest = JSON.parse(execFileSync('cat', [path.join(runDir, 'checkpoints.json')], { encoding: 'utf8' })) as {
      file: string;
    }[];
    const ckpt = path.join(runDir, manifest[manifest.length - 1].file);
    const raw = await predictFiles(ssh, ckpt, [image, broken], runDir, { timeoutMs: 300_000 });
    // The panel's image: a thumbnail made on the target (`thumbs` in the odd folder), for the answered file only.
    assert.deepEqual(answeredFiles(raw), [image]);
    const images = await targetImages(ssh, answeredFiles(raw), { timeoutMs: 120_000 });
    const v = toClassifyView(raw, images);
    assert.equal(v.predictions.length, 2);
    const [ok, bad] = v.predictions;
    assert.equal(ok.file, image);
    assert.match(ok.image ?? '', /^data:image\/jpeg;base64,/);
    const jpeg = Buffer.from((ok.image ?? '').split(',')[1], 'base64');
    assert.deepEqual([...jpeg.subarray(0, 3)], [0xff, 0xd8, 0xff], 'a JPEG');
    assert.ok(jpeg.length < 16_000, `a thumbnail, not the file (${jpeg.length} bytes)`);
    assert.equal(bad.image, null);
    assert.equal(ok.top?.length, 4);
    assert.ok(Math.abs((ok.top ?? []).reduce((a, t) => a + t.prob, 0) - 1) < 1e-6);
    assert.equal(bad.top, null);
    assert.match(bad.error ?? '', /^not_an_image: /);
    assert.equal(existsSync(path.join(tmp, 'PWNED')), false);
  },
);
