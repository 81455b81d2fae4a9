// Where a run's weights came from, in the Checkpoints view: the pretrained parent's tooltip and each
// checkpoint's tooltip name the source and the sha256 the runner recorded in checkpoints.json
// (`weights` of each entry), read through the real manifest parser; in English and in zh-cn.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import Module from 'node:module';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { parseManifest } from '../../../src/core/checkpoints/manifest';
import type { CheckpointDetail } from '../../../src/core/checkpoints/runInfo';
import * as fake from '../fixtures/fakeVscode';

const mod = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const load = mod._load;
mod._load = (request, ...rest) => (request === 'vscode' ? fake : load(request, ...rest));
// eslint-disable-next-line @typescript-eslint/no-require-imports -- after the fake vscode above is in place
const view = require('../../../src/vscode/checkpoints/view') as typeof import('../../../src/vscode/checkpoints/view');

after(() => {
  fake.env.language = 'en';
  fake.l10n.bundle = undefined;
});

const SHA = 'ab12cd34'.repeat(8);
const entry = (file: string, step: number, weights?: object) => ({
  file,
  epoch: step,
  step,
  metrics: { loss: 0.5, val_acc: 0.8 },
  bytes: 1000,
  sha256: 'ef'.repeat(32),
  created_at: 1796215428 + step,
  best: false,
  ...(weights ? { weights } : {}),
});

function details(entries: object[]): CheckpointDetail[] {
  const { entries: parsed, problems } = parseManifest(JSON.stringify(entries));
  assert.deepEqual(problems, []);
  return parsed.map((e) => ({ ...e, exports: [] }));
}

test('the pretrained parent names the source and its sha256, from the newest checkpoint that recorded them', () => {
  const cs = details([
    entry('checkpoints/a.ckpt', 1, { source: 'mindcv:resnet18', sha256: '00'.repeat(32) }),
    entry('checkpoints/b.ckpt', 2, { source: 'mindcv:resnet18', sha256: SHA }),
    entry('checkpoints/c.ckpt', 3),
  ]);
  assert.deepEqual(view.runWeights(cs), { source: 'mindcv:resnet18', sha256: SHA, firstSource: null });
  assert.equal(
    view.sourceTooltip('mindcv:resnet18', view.runWeights(cs)),
    `Pretrained weights: mindcv:resnet18\nsha256 ${SHA}`,
  );
  // a path the spec wrote relative, loaded from where the runner resolved it
  assert.equal(
    view.sourceTooltip('w/r18.ckpt', { source: '/data/w/r18.ckpt', sha256: SHA, firstSource: null }),
    `Pretrained weights: w/r18.ckpt\nloaded from /data/w/r18.ckpt\nsha256 ${SHA}`,
  );
  // an older run's manifest without `weights`: said, not left blank
  assert.match(
    view.sourceTooltip('w/r18.ckpt', view.runWeights(details([entry('checkpoints/c.ckpt', 3)]))),
    /sha256 not recorded/,
  );
  assert.equal(view.sourceTooltip(null, null), 'No pretrained weights: the run started from random weights.');
});

test("a checkpoint's tooltip ends with the weights it grew from; a bad sha256 in the manifest is not shown as one", () => {
  const [withSha, withoutSha] = details([
    entry('checkpoints/a.ckpt', 1, { source: 'hf-hub:timm/resnet18.a1_in1k', sha256: SHA.toUpperCase() }),
    entry('checkpoints/b.ckpt', 2, { source: '/w/r18.ckpt', sha256: 'not-a-hash' }),
  ]);
  assert.match(
    view.checkpointTooltip(withSha, undefined),
    new RegExp(`\\nweights from hf-hub:timm/resnet18\\.a1_in1k \\(sha256 ${SHA}\\)$`),
  );
  assert.match(view.checkpointTooltip(withoutSha, undefined), /\nweights from \/w\/r18\.ckpt$/);
  assert.doesNotMatch(view.checkpointTooltip(withoutSha, undefined), /not-a-hash/);
});

test('a fine-tune of a fine-tune names where the chain began (the last `from` the runner kept)', () => {
  const first = { source: 'mindcv:resnet50', sha256: SHA };
  const middle = { source: '/runs/a/checkpoints/a-e3-s9.ckpt', sha256: SHA, from: first };
  const [c] = details([
    entry('checkpoints/b.ckpt', 1, { source: '/runs/b/checkpoints/b-e2-s6.ckpt', sha256: SHA, from: middle }),
  ]);
  assert.equal(c.weights?.firstSource, 'mindcv:resnet50');
  assert.match(view.checkpointTooltip(c, undefined), /\na fine-tune of weights that began as mindcv:resnet50$/);
  assert.match(view.sourceTooltip('b.ckpt', c.weights), /a fine-tune of weights that began as mindcv:resnet50/);
  // a link without a source ends the chain where the last good one was
  const [odd] = details([
    entry('checkpoints/c.ckpt', 2, { source: 'x.ckpt', from: { ...middle, from: { sha256: SHA } } }),
  ]);
  assert.equal(odd.weights?.firstSource, '/runs/a/checkpoints/a-e3-s9.ckpt');
});

test('zh-cn: the same tooltips in Simplified Chinese, sources and hashes as written', () => {
  fake.env.language = 'zh-cn';
  fake.l10n.bundle = JSON.parse(
    readFileSync(path.join(__dirname, '..', '..', '..', 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8'),
  );
  const [c] = details([entry('checkpoints/a.ckpt', 1, { source: 'mindcv:resnet18', sha256: SHA })]);
  assert.match(view.checkpointTooltip(c, undefined), new RegExp(`权重来自 mindcv:resnet18（sha256 ${SHA}）$`));
  assert.equal(
    view.sourceTooltip('w.ckpt', { source: '/d/w.ckpt', sha256: null, firstSource: null }),
    '预训练权重：w.ckpt\n加载自 /d/w.ckpt\n未记录 sha256（此运行的检查点早于该记录，或尚未保存检查点）',
  );
});
