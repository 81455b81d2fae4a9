// Issue 21: the errors core throws that a user commonly meets (a spec's syntax, a sweep file, a
// stream that stopped, installing mindcv, a runner of another version) are worded in zh-cn by
// their `words`, while `message` stays English for the log and the CLI.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { english, translator } from '../../src/shared/l10n';
import { wordedErrorText } from '../../src/core/l10n';
import { parseSpecText } from '../../src/core/spec/file';
import { sweepSpecForTarget } from '../../src/core/sweeps/remote';
import { parseProbe } from '../../src/core/targets/mindcvPlan';
import { RunnerOutputError } from '../../src/core/checkpoints/client';

const ZH = translator(
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8')) as Record<
    string,
    string
  >,
);

const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  assert.fail('nothing was thrown');
};

test('a spec with a duplicate key: English message, zh-cn words with the line and the key', () => {
  const e = thrown(() => parseSpecText('{\n  "train": {},\n  "data": {},\n  "train": {}\n}', 'a.ascend.json'));
  assert.equal(
    (e as Error).message,
    'duplicate key "train" in the spec at line 4: keep one "train" and delete the others',
  );
  assert.equal(wordedErrorText(e, english), (e as Error).message);
  assert.equal(wordedErrorText(e, ZH), '运行规格第 4 行有重复的键 "train"：保留一个 "train"，删除其他的');
});

test('a YAML syntax error says where in zh-cn; the parser detail stays as the parser says it', () => {
  const e = thrown(() => parseSpecText('data:\n  train: [a, b\nmodel: {}\n', 'a.ascend.yaml'));
  assert.match(wordedErrorText(e, ZH)!, /^第 \d+ 行第 \d+ 列不是有效的 YAML：\S/);
  assert.match((e as Error).message, /^not valid YAML at line \d+ column \d+: /);
});

test("a sweep file's syntax error is worded whole, the spec's own error inside it included", (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'aft-errzh-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 's.ascend-sweep.yaml');
  writeFileSync(file, 'base: {}\nbase: {}\n');
  const e = thrown(() => sweepSpecForTarget(file));
  const zh = wordedErrorText(e, ZH)!;
  // Only the YAML parser's own detail stays English.
  assert.match(zh, /^超参数搜索规格 s\.ascend-sweep\.yaml：第 2 行第 1 列不是有效的 YAML：Map keys must be unique/);
  const base = path.join(dir, 'b.ascend-sweep.yaml');
  writeFileSync(base, 'base: ./missing.ascend.yaml\nspace: {}\n');
  assert.equal(
    wordedErrorText(
      thrown(() => sweepSpecForTarget(base)),
      ZH,
    ),
    'base：在超参数搜索文件旁找不到 ./missing.ascend.yaml：请修正路径，或直接内联写出基础运行规格',
  );
});

test("mindcv's probe answer and a runner of another version are worded in zh-cn", () => {
  assert.equal(
    wordedErrorText(
      thrown(() => parseProbe('Traceback...\nNameError: x')),
      ZH,
    ),
    '目标的 Python 回答的不是它的描述：NameError: x',
  );
  assert.equal(
    wordedErrorText(new RunnerOutputError('ls', 'no checkpoints'), ZH),
    '运行器 ls 输出了意外的结果（no checkpoints）；目标上的运行器与扩展是同一版本吗？',
  );
  assert.equal(wordedErrorText(new Error('plain'), ZH), undefined);
});
