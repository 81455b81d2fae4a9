// A checkpoint's one-line description (the Checkpoints view's rows, the checkpoint pickers) in the
// display language: English as before, and with the zh-cn bundle every word Chinese, the file's
// numbers as they are.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { describeEntry, formatAge } from '../../../src/core/checkpoints/describe';
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
