// The sweep spec's problems for a zh-cn client: the sweep schema's and ajv's words and the space-key
// check in Chinese, at the same lines, with field paths, values and suggestions as written; an
// English client keeps the words it had. A field with x-expect/x-fix in the schema is worded as a
// run spec's field is: what it must be, the value it got, and the schema's fix.
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

function messages(locale: string, text = BAD): { line: number; message: string }[] {
  l10n.setLocale(locale);
  const td = TextDocument.create('file:///w/s.ascend-sweep.yaml', 'ascend-sweep', 1, text);
  return diagnoseSweep(parseSpecDocument(text, 's.ascend-sweep.yaml'), td).map((d) => ({
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
    'name：必须是：非空字符串，实际为 ""（将 "name" 设为一个简短的标签）',
    'space.model.freeze.choices：至少需要 1 项',
    'objective.direction：必须是允许的值之一',
    'trials：必须 >= 1',
    'base：必须是：运行规格（一个对象）或运行规格文件的路径，实际为 5（将 base 设为运行规格，例如 {"data": {"train": "DIR"}}，或设为路径，例如 "my.ascend.yaml"）',
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
    'name: must be a non-empty string, got "" (set "name" to a short label)',
    'objective.direction: must be equal to one of the allowed values',
    'trials: must be >= 1',
    'devices.ids: must NOT have duplicate items (items ## 1 and 0 are identical)',
    'space.train.lrr: not a run-spec field a sweep can set; did you mean "train.lr"?',
    'space.zzz: not a run-spec field a sweep can set (fields are dotted paths such as "train.lr")',
    'base: must be a run spec (an object) or the path of a run-spec file, got 5 (set base to a run spec such as {"data": {"train": "DIR"}}, or to a path like "my.ascend.yaml")',
  ])
    assert.ok(en.includes(want), `${want} in ${JSON.stringify(en)}`);
});

test("a field's problem names the field, what the schema expects, the value and the schema's fix", () => {
  const text = 'name: x\nbase: b.ascend.yaml\nspace: {}\ndevices: some\n';
  const en = messages('en', text);
  assert.deepEqual(en, [
    {
      line: 0,
      message:
        'the sweep spec: must have required property \'trials\' (start from {"base": "my.ascend.yaml", "space": {"train.lr": {"low": 0.001, "high": 0.1, "log": true}}, "trials": 20})',
    },
    {
      line: 2,
      message:
        'space: must be a map of run-spec fields ("train.lr") to {choices} or {low, high}, got {} (e.g. {"train.lr": {"low": 0.0001, "high": 0.1, "log": true}, "model.freeze": {"choices": ["backbone", "none"]}})',
    },
    {
      line: 3,
      message:
        'devices: must be "all free" or {"ids": [...], "per_trial": N}, got "some" (set devices to "all free" or to {"ids": [0, 1, 2, 3]})',
    },
  ]);
  const zh = messages('zh-cn', text);
  assert.deepEqual(
    zh.map((d) => d.line),
    [0, 2, 3],
  );
  assert.equal(
    zh[2].message,
    'devices：必须是："all free" 或 {"ids": [...], "per_trial": N}，实际为 "some"（将 devices 设为 "all free" 或 {"ids": [0, 1, 2, 3]}）',
  );
  assert.match(zh[0].message, /^超参数搜索规格：缺少必填字段 'trials'（可以从 \{"base": .* 开始）$/);
  assert.match(zh[1].message, /^space：必须是：运行规格字段（"train\.lr"）到 .* 的映射，实际为 \{\}（例如 /);
});
