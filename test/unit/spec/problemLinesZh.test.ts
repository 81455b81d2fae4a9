// The pre-launch problem list (the wizard's and a spec file's Start) in Chinese: the same wording as
// the language server's diagnostics, the runner's English problems read back through the local
// checker, field paths and values as written; English lists stay the runner's words exactly.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, test } from 'node:test';
import { checkName, problemLines } from '../../../src/core/spec/builder';
import type { ProblemWording } from '../../../src/core/spec/problemWords';
import { checkSpec } from '../../../src/core/spec/schema';
import { schemaTranslator } from '../../../src/core/spec/schemaL10n';
import * as l10n from '../../../src/server/l10n';
import { problemLine } from '../../../src/server/schemaWords';
import { translator } from '../../../src/shared/l10n';

const ROOT = path.join(__dirname, '..', '..', '..');
const ZH: ProblemWording = {
  t: translator(JSON.parse(readFileSync(path.join(ROOT, 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8'))),
  schemaText: schemaTranslator('zh-cn'),
};
const BAD = { name: 'x', data: { train: '/d', batchsize: 8, workers: 2.5 }, train: { lr: -1 }, amp: { level: 'O9' } };
const CHINESE = /[\u4e00-\u9fff]/;

afterEach(() => l10n.setLocale(undefined));

/** The runner's `validate` answer: the same problems, English only (it sends no words). */
const runnerSaid = (problems: { path: string; message: string; fix: string }[]) => ({
  ok: false,
  problems: problems.map(({ path: p, message, fix }) => ({ path: p, message, fix })),
});

test("the local check's problems in Chinese, worded as the editor's diagnostics word them", () => {
  const problems = checkSpec(BAD);
  assert.ok(problems.length >= 4, JSON.stringify(problems));
  const lines = problemLines({ problems }, { wording: ZH });
  l10n.setLocale('zh-cn');
  assert.deepEqual(
    lines,
    problems.map((p) => problemLine(p)),
  );
  for (const [i, line] of lines.entries()) {
    assert.match(line, CHINESE, line);
    assert.ok(line.startsWith(`${problems[i].path}：`), line);
  }
  assert.ok(lines.includes('data.batchsize：未知字段（是否想写 "batch_size"？）'), lines.join('\n'));
  assert.ok(
    lines.some((l) => l.startsWith('train.lr：') && l.includes('-1') && l.includes('> 0.0')),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((l) => l.startsWith('amp.level：') && l.includes('"O9"')),
    lines.join('\n'),
  );
});

test("the runner's English problems in Chinese through the spec's local check", () => {
  const english = checkSpec(BAD);
  const lines = problemLines(runnerSaid(english), { wording: ZH, spec: BAD });
  assert.deepEqual(lines, problemLines({ problems: english }, { wording: ZH }));
});

test('a path missing on the target in Chinese, the path and value as the runner wrote them', () => {
  const output = runnerSaid([
    {
      path: 'data.train',
      message: 'folder not found: /data/花 flowers',
      fix: 'point data.train at an existing folder on the target',
    },
    {
      path: 'model.pretrained',
      message: 'file not found: ~/w.ckpt',
      fix: 'point model.pretrained at an existing file on the target',
    },
  ]);
  assert.deepEqual(problemLines(output, { wording: ZH, spec: { name: 'x', data: { train: '/data/花 flowers' } } }), [
    'data.train：文件夹不存在：/data/花 flowers（将 data.train 指向目标上已有的文件夹）',
    'model.pretrained：文件不存在：~/w.ckpt（将 model.pretrained 指向目标上已有的文件）',
  ]);
});

test('a mistyped source prefix and a folder for the weights, said on the target, in Chinese', () => {
  // The runner's words for them (spec.py), exactly as the shared examples pin them.
  const output = runnerSaid([
    {
      path: 'model.pretrained',
      message: 'file not found: mindvc:resnet18',
      fix: 'point model.pretrained at an existing file on the target, or name weights to download as mindcv:<model> or hf-hub:<org>/<repo>',
    },
    {
      path: 'model.pretrained',
      message: 'is a folder, not a file: /w/权重',
      fix: 'point model.pretrained at a file in it (a .ckpt, .safetensors, .pth, .pt or .bin file), not the folder',
    },
  ]);
  assert.deepEqual(problemLines(output, { wording: ZH, spec: { name: 'x' } }), [
    'model.pretrained：文件不存在：mindvc:resnet18（将 model.pretrained 指向目标上已有的文件，或写成要下载的权重 mindcv:<model> 或 hf-hub:<org>/<repo>）',
    'model.pretrained：这是文件夹，不是文件：/w/权重（将 model.pretrained 指向其中的文件（.ckpt、.safetensors、.pth、.pt 或 .bin 文件），而不是文件夹）',
  ]);
});

test('a runner problem the local checker does not know keeps its English words', () => {
  const output = runnerSaid([
    { path: 'device.id', message: 'NPU 3 is busy', fix: 'pick another device' },
    { path: 'data.train', message: 'folder not found: /x', fix: 'point elsewhere' },
  ]);
  const [busy, odd] = problemLines(output, { wording: ZH, spec: { name: 'x' } });
  assert.ok(busy.includes('NPU 3 is busy') && busy.includes('pick another device'), busy);
  assert.ok(odd.includes('folder not found: /x') && odd.includes('point elsewhere'), odd);
});

test('English lists are the runner’s words exactly, with or without the spec', () => {
  const english = checkSpec(BAD);
  const expected = english.map((p) => `${p.path ? `${p.path}: ` : ''}${p.message}${p.fix ? ` (${p.fix})` : ''}`);
  assert.deepEqual(problemLines({ problems: english }), expected);
  assert.deepEqual(problemLines(runnerSaid(english), { spec: BAD }), expected);
});

test("the run name prompt's problem in Chinese; English as before", () => {
  assert.equal(checkName('  ', ZH.t), '运行需要一个名称');
  assert.equal(checkName('  '), 'a run needs a name');
  assert.equal(checkName('x', ZH.t), undefined);
});
