// Checkpoints in words (the Checkpoints view's rows and error texts, the checkpoint pickers, an
// evaluation folder with other classes) in the display language: English as before, and with the
// zh-cn bundle every word Chinese, names and numbers as they are.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { classMismatchText, describeEntry, formatAge, verifyProblem } from '../../../src/core/checkpoints/describe';
import type { CheckpointEntry } from '../../../src/core/checkpoints/manifest';
import { translator } from '../../../src/shared/l10n';

const zh = translator(
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8')),
);
const entry = {
  file: 'checkpoints/r-e2-s6.ckpt',
  epoch: 2,
  step: 6,
  valAcc: 0.75,
  valLoss: 0.4123,
  loss: 0.3,
  reason: 'stopped',
  bytes: 44_767_056,
  createdAt: 1000,
} as CheckpointEntry;

test('a checkpoint row in English and in zh-cn', () => {
  assert.equal(
    describeEntry(entry, 1180),
    'e2 · s6 · acc 75.0% · val loss 0.412 · saved when the run stopped · 44.8 MB · 3 min ago',
  );
  assert.equal(
    describeEntry(entry, 1180, zh),
    'e2 · s6 · 准确率 75.0% · 验证损失 0.412 · 运行停止时保存 · 44.8 MB · 3 分钟前',
  );
  assert.equal(
    describeEntry({ ...entry, valLoss: null, reason: 'requested' }, 1000 + 7200, zh),
    'e2 · s6 · 准确率 75.0% · 损失 0.300 · 按请求保存 · 44.8 MB · 2 小时前',
  );
  // a reason a later runner adds stays as written
  assert.match(describeEntry({ ...entry, reason: 'plateau' }, 1180, zh), / · plateau · /);
});

test('ages: seconds, minutes, hours, days; none without a time', () => {
  assert.deepEqual(
    [5, 180, 7200, 3 * 86400].map((s) => formatAge(0, s, zh)),
    ['5 秒前', '3 分钟前', '2 小时前', '3 天前'],
  );
  assert.equal(formatAge(0, 5), '5 s ago');
  assert.equal(formatAge(null, 5, zh), '');
});

test("an unusable file and an evaluation folder's other classes, in English and zh-cn", () => {
  const v = { file: 'checkpoints/a.ckpt', exists: true, bytes_ok: false, sha256_ok: null };
  assert.equal(verifyProblem(v), 'size differs from checkpoints.json (truncated?)');
  assert.equal(verifyProblem(v, zh), '大小与 checkpoints.json 不符（文件被截断？）');
  assert.equal(verifyProblem({ ...v, exists: false }, zh), '文件缺失');
  assert.equal(verifyProblem({ ...v, reason: 'the runner says so' }, zh), 'the runner says so', "the runner's words");
  assert.equal(verifyProblem({ ...v, bytes_ok: true }, zh), undefined);
  const m = { missing: ['cat'], extra: ['dog', 'emu'] };
  assert.match(classMismatchText(m), /\(missing class folder: cat; extra class folders: dog, emu\)/);
  assert.equal(
    classMismatchText(m, zh),
    '该文件夹的类别与运行的不同（缺少类别文件夹：cat；多出类别文件夹：dog、emu）。请选择包含该运行各类别文件夹的 ImageFolder。',
  );
});
