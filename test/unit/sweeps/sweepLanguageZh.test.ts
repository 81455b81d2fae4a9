// The sweep spec's problems for a zh-cn client: the sweep schema's and ajv's words and the space-key
// check in Chinese, at the same lines, with field paths, values and suggestions as written; an
// English client keeps the words it had.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import * as l10n from '../../../src/server/l10n';
import { diagnoseSweep } from '../../../src/server/sweepLanguage';
import { parseSpecDocument } from '../../../src/server/specDocument';

afterEach(() => l10n.setLocale(undefined));

const BAD = `name: ""
base: 5
space:
  train.lrr: {low: 1.0e-4, high: 1.0e-1, log: true}
  model.freeze: {choices: []}
  zzz: {low: 1, high: 2}
objective: {metric: best_val_acc, direction: up}
trials: 0
sampler: tpe
sampler2: x
devices: {ids: [1, 1]}
`;

function messages(locale: string): { line: number; message: string }[] {
  l10n.setLocale(locale);
  const td = TextDocument.create('file:///w/s.ascend-sweep.yaml', 'ascend-sweep', 1, BAD);
  return diagnoseSweep(parseSpecDocument(BAD, 's.ascend-sweep.yaml'), td).map((d) => ({
    line: d.range.start.line,
    message: String(d.message),
  }));
}

test('every sweep problem in Chinese, on the same line, its field path first', () => {
  const en = messages('en');
  const zh = messages('zh-cn');
  assert.ok(en.length >= 9, JSON.stringify(en));
  assert.deepEqual(
    zh.map((d) => d.line),
    en.map((d) => d.line),
  );
  for (const [i, d] of zh.entries()) {
    assert.match(d.message, /[\u4e00-\u9fff]/, d.message);
    const field = en[i].message.split(': ')[0];
    assert.ok(d.message.startsWith(`${field}：`), `${d.message} names ${field}`);
    // no English sentence left once names, values and schema examples are taken out
    const prose = d.message.replace(/"[^"]*"|\{[^}]*\}|\[[^\]]*\]|[\w.:/-]*[\d_.][\w.:/-]*/g, '');
    assert.doesNotMatch(prose, /[A-Za-z]{3,} [A-Za-z]{3,}/, d.message);
  }
});

test('the Chinese wording of the sweep problems, word for word', () => {
  const zh = messages('zh-cn').map((d) => d.message);
  for (const want of [
    'sampler2：未知字段 "sampler2"',
    'name：至少需要 1 个字符',
    'space.model.freeze.choices：至少需要 1 项',
    'objective.direction：必须是允许的值之一',
    'trials：必须 >= 1',
    'base：必须是：object,string',
    'devices.ids：不能有重复项（项 1 与项 0 相同）',
    'space.train.lrr：不是超参数搜索可以设置的运行规格字段；是否想写 "train.lr"？',
    'space.zzz：不是超参数搜索可以设置的运行规格字段（字段是以点分隔的路径，例如 "train.lr"）',
  ])
    assert.ok(zh.includes(want), `${want} in ${JSON.stringify(zh)}`);
});

test('English clients keep the sweep problems as they were worded', () => {
  const en = messages('en').map((d) => d.message);
  for (const want of [
    'sampler2: unknown field "sampler2"',
    'name: must NOT have fewer than 1 characters',
    'objective.direction: must be equal to one of the allowed values',
    'trials: must be >= 1',
    'devices.ids: must NOT have duplicate items (items ## 1 and 0 are identical)',
    'space.train.lrr: not a run-spec field a sweep can set; did you mean "train.lr"?',
    'space.zzz: not a run-spec field a sweep can set (fields are dotted paths such as "train.lr")',
    'base: must be object,string',
  ])
    assert.ok(en.includes(want), `${want} in ${JSON.stringify(en)}`);
});
