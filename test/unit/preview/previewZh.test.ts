// Preview Data's sentences in the display language: the panel's problems, split and imbalance, and
// the wizard summary's data-check line, from the runner's real `preview` answers (fixtures/preview).
// Class names, files and the runner's own reasons stay as sent; English is unchanged without `t`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { dataCheckOf } from '../../../src/core/preview/check';
import { previewSummary, toPreviewView } from '../../../src/core/preview/model';
import { dataCheckLines } from '../../../src/core/wizard/summary';
import { translator } from '../../../src/shared/l10n';

const ROOT = path.join(__dirname, '..', '..', '..');
const ZH = translator(JSON.parse(readFileSync(path.join(ROOT, 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8')));
const FIX = path.join(__dirname, '..', 'fixtures', 'preview');
const load = (f: string) => JSON.parse(readFileSync(path.join(FIX, f), 'utf8')) as unknown;

test('zh-cn problems, split and imbalance of a folder with a duplicate, a broken file and tiny classes', () => {
  const v = toPreviewView(load('shapes.json'), ZH);
  assert.deepEqual(
    v.problems.map((p) => p.message),
    [
      '1 张训练图像与另一张完全重复（共 1 组）',
      '扫描跳过了 1 个文件（1 UnidentifiedImageError）：训练不会用到它',
      '4 个类别的训练图像少于 20 张：blue triangle、green square、red circle、yellow cross',
    ],
  );
  assert.equal(v.problems[0].files[0].note, '与 /tmp/s18b-demo/shapes/blue triangle/0000.png 相同');
  assert.match(v.problems[1].files[0].note, /cannot identify image file/, "the runner's reason as sent");
  assert.equal(v.split, '每个类别留出 10% 用于验证（种子 1）');
  assert.equal(v.imbalance?.text, '1.2×（blue triangle 6 / green square 5 张训练图像）');
  assert.deepEqual(previewSummary(v, ZH), {
    counts: '4 个类别，21 张训练 / 4 张验证图像，不平衡 1.2×',
    problems: v.problems.map((p) => p.message).join('；'),
  });
});

test('zh-cn leakage names each validation copy’s training original', () => {
  const v = toPreviewView(load('shapes-val.json'), ZH);
  assert.equal(v.problems[0].kind, 'leak');
  assert.match(v.problems[0].message, /^\d+ 张验证图像是训练图像的副本（泄漏：验证准确率会偏高）$/);
  assert.match(v.problems[0].files[0].note, /^.+ 的副本$/);
  assert.match(v.split, /^验证文件夹 /);
});

test('zh-cn wizard data-check lines: counts and problems in Chinese, a clean folder too', () => {
  const lines = (f: string) => dataCheckLines(dataCheckOf(load(f), ZH), ZH).map((l) => l.text);
  const [counts, problems] = lines('shapes.json');
  assert.match(counts, /^数据检查：4 个类别，21 张训练 \/ 4 张验证图像/);
  assert.match(problems, /完全重复.*；扫描跳过了 1 个文件.*；4 个类别的训练图像少于 20 张/);
  assert.doesNotMatch(problems, /duplicate|skipped|fewer than/);
  assert.deepEqual(lines('shapes-clean.json').slice(1), ['问题：未发现问题']);
});

test('English without a translator: the same words as before', () => {
  const v = toPreviewView(load('shapes.json'));
  assert.equal(v.problems[0].message, '1 training image is an exact duplicate of another (in 1 group)');
  assert.deepEqual(previewSummary(toPreviewView(load('shapes-clean.json'))), {
    counts: '4 classes, 108 train / 12 val images, imbalance 1×',
    problems: 'no problems found',
  });
});
