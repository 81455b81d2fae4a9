// The schema checker's problems in the editor for a zh-cn client: the shared examples (the ones the
// runner is held to in English) give Chinese diagnostics on the same lines and spans, with their
// field paths, values and suggestions as written; English clients keep the runner's words exactly.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { checkSpec } from '../../../src/core/spec/schema';
import { diagnose } from '../../../src/server/diagnostics';
import * as l10n from '../../../src/server/l10n';
import { problemText } from '../../../src/server/schemaWords';
import { parseSpecDocument } from '../../../src/server/specDocument';
import { EXAMPLES_DIR, expectedOf, type Expected } from '../../spec-examples/expected';

afterEach(() => l10n.setLocale(undefined));

const SHOWN = [
  'typos.ascend.json',
  'nulls-and-numbers.ascend.json',
  'missing.ascend.json',
  'not-an-object.ascend.json',
  'preprocess-fields.ascend.json',
  'preprocess-shape.ascend.json',
  'yaml-types.ascend.yaml',
  'knobs.ascend.json',
  'paths.ascend.yaml',
];

function diagnostics(file: string, locale: string): { td: TextDocument; ds: Diagnostic[] } {
  l10n.setLocale(locale);
  const text = readFileSync(path.join(EXAMPLES_DIR, file), 'utf8');
  const td = TextDocument.create(`file:///w/${file}`, 'ascend-run', 1, text);
  // the examples' own folder, as the runner reads them (paths.ascend.yaml's missing paths)
  const ds = diagnose(parseSpecDocument(text, file), td, { baseDir: EXAMPLES_DIR, local: true });
  return { td, ds };
}

/** The expected problem's diagnostic: same field (its code), line and span. */
function find(ds: Diagnostic[], td: TextDocument, e: Expected): Diagnostic | undefined {
  return ds.find(
    (d) =>
      (d.code ?? '') === e.path &&
      d.range.start.line + 1 === e.line &&
      (e.text === undefined || td.getText(d.range) === e.text),
  );
}

/** What must survive translation: quoted names and values, field paths, numbers and bounds. */
function tokens(e: Expected): string[] {
  const text = `${e.path} ${e.message} ${e.fix}`.replace(/\be\.g\./g, '');
  return [...text.matchAll(/"[^"]*"|[<>]=? [-\d.]+|[\w.:/-]*[\d_.][\w.:/-]*/g)]
    .map((m) => m[0].replace(/[.,:]+$/, ''))
    .filter((x) => /[\w"]/.test(x));
}

for (const file of SHOWN) {
  test(`${file}: every schema problem in Chinese, on the same span, names and values intact`, () => {
    const expected = expectedOf(file);
    assert.ok(expected.length > 0, 'an example with problems');
    const { td, ds } = diagnostics(file, 'zh-cn');
    for (const e of expected) {
      const d = find(ds, td, e);
      assert.ok(d, `${e.path}: ${e.message} on line ${e.line} (${JSON.stringify(ds.map((x) => x.message))})`);
      const message = String(d.message);
      assert.match(message, /[\u4e00-\u9fff]/, message);
      if (e.path) assert.ok(message.startsWith(`${e.path}：`), message);
      if (e.fix) assert.match(message, /（.*[\u4e00-\u9fff].*）$/s, `the fix is Chinese too: ${message}`);
      for (const tok of tokens(e)) assert.ok(message.includes(tok), `${tok} kept in: ${message}`);
      // no English sentence left once names, values and schema examples are taken out
      const prose = message.replace(/"[^"]*"|\{[^}]*\}|\[[^\]]*\]|[\w.:/-]*[\d_.][\w.:/-]*/g, '');
      assert.doesNotMatch(prose, /[A-Za-z]{3,} [A-Za-z]{3,}/, message);
    }
  });
}

test('English clients get the runner’s words exactly, as the shared examples pin them', () => {
  for (const file of SHOWN) {
    const { td, ds } = diagnostics(file, 'en');
    for (const e of expectedOf(file)) {
      const d = find(ds, td, e);
      assert.equal(d?.message, `${e.path ? `${e.path}: ` : ''}${e.message}${e.fix ? ` (${e.fix})` : ''}`);
    }
  }
});

test('the Chinese wording of a few problems, word for word', () => {
  l10n.setLocale('zh-cn');
  const words = (spec: unknown, floats: string[] = []) =>
    checkSpec(spec, { floatPaths: new Set(floats) }).map((p) => `${p.path} ${JSON.stringify(problemText(p))}`);
  assert.deepEqual(words({ data: { train: 'x', batchsize: 8, workers: 2 }, train: { lr: -1 } }, ['data.workers']), [
    'data.batchsize {"message":"未知字段","fix":"是否想写 \\"batch_size\\"？"}',
    'data.workers {"message":"必须是整数，实际为 2.0","fix":"将 data.workers 设为整数"}',
    'train.lr {"message":"必须 > 0.0 且 <= 100.0，实际为 -1","fix":"将 train.lr 设为 > 0.0 且 <= 100.0 的值"}',
  ]);
  assert.deepEqual(words({ name: '', data: {} }), [
    'name {"message":"必须是：非空字符串，实际为 \\"\\"","fix":"将 \\"name\\" 设为一个简短的标签"}',
    'data.train {"message":"为必填项","fix":"将 data.train 设为 ImageFolder 根目录（每个类别一个文件夹）"}',
  ]);
});

test('a problem of a kind the server does not know shows the checker’s English', () => {
  l10n.setLocale('zh-cn');
  const p = { path: 'x', message: 'a new check', fix: 'do it', words: { kind: 'later' } } as never;
  assert.deepEqual(problemText(p), { message: 'a new check', fix: 'do it' });
  assert.deepEqual(problemText({ path: 'x', message: 'plain', fix: '' }), { message: 'plain', fix: '' });
});
