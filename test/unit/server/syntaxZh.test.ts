// A spec the server cannot read (bad JSON, bad YAML, a key written twice, a file too large or not
// text) gets its one diagnostic in the client's language: Chinese for a zh-cn client, with the
// file's own names kept; an English client keeps the English words.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { diagnose } from '../../../src/server/diagnostics';
import * as l10n from '../../../src/server/l10n';
import { parseSpecDocument } from '../../../src/server/specDocument';

afterEach(() => l10n.setLocale(undefined));

function messages(text: string, file: string, locale?: string): string[] {
  l10n.setLocale(locale);
  const td = TextDocument.create(`file:///w/${file}`, 'ascend-run', 1, text);
  return diagnose(parseSpecDocument(text, file), td).map((d) => String(d.message));
}

const CASES: [name: string, text: string, file: string, en: RegExp, zh: RegExp][] = [
  [
    'a missing comma',
    '{"data": {"train": "d"} "train": {}}',
    'a.ascend.json',
    /^not valid JSON: a comma was expected$/,
    /^不是有效的 JSON：此处应为逗号$/,
  ],
  ['a comment in JSON', '{ // no\n}', 'a.ascend.json', /comments are not allowed in JSON/, /JSON 中不允许注释/],
  [
    'a key written twice (JSON)',
    '{"train": {"lr": 1, "lr": 2}}',
    'a.ascend.json',
    /^duplicate key "lr" in train: it is written more than once/,
    /^train 中有重复的键 "lr"/,
  ],
  [
    'a key written twice (YAML)',
    'train:\n  lr: 1\n  lr: 2\n',
    'a.ascend.yaml',
    /the key "lr" appears twice/,
    /键 "lr" 出现了两次/,
  ],
  [
    'a file too large',
    `{"x": "${'a'.repeat(20_000)}"}`,
    'a.ascend.json',
    /^this file is 20 KB: a run spec/,
    /^此文件大小为 20 KB/,
  ],
  [
    'a control character',
    '{"a": 1}\u0001',
    'a.ascend.json',
    /^not a text file: control character U\+0001 at offset 8$/,
    /^不是文本文件：偏移 8 处有控制字符 U\+0001$/,
  ],
  [
    'nesting too deep',
    `${'['.repeat(40)}${']'.repeat(40)}`,
    'a.ascend.json',
    /^nested more than 32 levels deep/,
    /^嵌套超过 32 层/,
  ],
];

for (const [name, text, file, en, zh] of CASES) {
  test(`${name}: English for an English client, Chinese for zh-cn`, () => {
    const english = messages(text, file);
    assert.ok(english.length > 0 && english.some((m) => en.test(m)), english.join('\n'));
    const chinese = messages(text, file, 'zh-cn');
    assert.equal(chinese.length, english.length);
    assert.ok(
      chinese.some((m) => zh.test(m)),
      chinese.join('\n'),
    );
    for (const m of chinese)
      assert.doesNotMatch(m.replace(/JSON|YAML|KB|U\+\w+|"\w+"|train|\.ascend\.yaml/g, ''), /[a-z]{4,}/);
  });
}
