// Lists the user reads are punctuated in the display language: `a, b` in English, `a、b` in
// Simplified Chinese, through the one helper (src/shared/l10n.ts `joined`) that the host, the
// language server, core code and the pages share. A source check keeps new lists from joining
// with a bare ', ' where a user reads them.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { listForConfirmation } from '../../../src/core/checkpoints/prune';
import { dashboardTitle } from '../../../src/core/dashboard/title';
import { problemLine } from '../../../src/core/spec/problemWords';
import { checkSpec } from '../../../src/core/spec/schema';
import { schemaTranslator } from '../../../src/core/spec/schemaL10n';
import { english, joined, translator } from '../../../src/shared/l10n';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const zh = translator(JSON.parse(readFileSync(path.join(ROOT, 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8')));

test('joined: English commas, the Chinese enumeration comma, one item alone, none empty', () => {
  assert.equal(joined(['daisy', 'rose', 'tulip'], english), 'daisy, rose, tulip');
  assert.equal(joined(['daisy', 'rose', 'tulip'], zh), 'daisy、rose、tulip');
  assert.equal(joined(['daisy'], zh), 'daisy');
  assert.equal(joined([], zh), '');
});

test('the lists in sentences: a spec problem, a dashboard title and a delete confirmation', () => {
  const [p] = checkSpec({ data: { train: '/d' }, model: { backbone: 'resnet18' }, train: { optimizer: 'adamx' } });
  assert.equal(p.path, 'train.optimizer');
  const w = { t: zh, schemaText: schemaTranslator('zh-cn') };
  assert.match(problemLine(p, w), /momentum、sgd、adamw/, problemLine(p, w));
  assert.match(problemLine(p), /momentum, sgd, adamw/, 'English: as the runner words it');

  assert.equal(dashboardTitle(['a', 'b'], zh), '比较：a、b');
  assert.equal(dashboardTitle(['a', 'b']), 'Compare: a, b');

  const entry = {
    file: 'checkpoints/r-e2-s6.ckpt',
    epoch: 2,
    step: 6,
    valAcc: 0.5,
    best: true,
  } as Parameters<typeof listForConfirmation>[0][number];
  assert.deepEqual(listForConfirmation([entry], [entry.file], zh), [
    'r-e2-s6.ckpt（轮次 2、步 6、验证准确率 50.0%、最佳）',
  ]);
  assert.deepEqual(listForConfirmation([entry], [entry.file]), ['r-e2-s6.ckpt (epoch 2, step 6, val acc 50.0%, BEST)']);
});

/** `.join(', ')` / `.join(' and ')` left in src/ and webview/, each with why no user reads it as a list. */
const NOT_A_USER_LIST: [file: RegExp, line: RegExp, why: string][] = [
  [
    /^src\/(extension|vscode\/context|vscode\/installMindcv|vscode\/checkpoints\/actions)\.ts$/,
    /log\.info/,
    'a log line',
  ],
  [/^src\/cli\/(main|demo)\.ts$/, /console\.log|task B: /, "the CLI's English output"],
  [/^src\/shared\/checkpointsProtocol\.ts$/, /must be one of/, "a refused webview message's reason, logged"],
  [/^src\/core\/spec\/schema\.ts$/, /(known fields|one of): /, "the runner's English, pinned by the shared examples"],
  [/^src\/core\/spec\/(writer|py)\.ts$/, /./, 'YAML and JSON text'],
  [/^src\/core\/runs\/(meta|table)\.ts$/, /tags/, 'the tags as the user edits and filters them (split on commas)'],
  [/^webview\/checkpoints\/details\.ts$/, /shape/, 'a tensor shape, written like code'],
  [
    /^src\/core\/dashboard\/runRegistry\.ts$/,
    /events\.jsonl/,
    'not yet localised: the dashboard registry words its problems in English',
  ],
];

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    return statSync(path.join(ROOT, rel)).isDirectory() ? sources(rel) : rel.endsWith('.ts') ? [rel] : [];
  });
}

test("no list a user reads is joined with a bare ', ' or ' and ' (use joined(items, t))", () => {
  const found: string[] = [];
  for (const file of [...sources('src'), ...sources('webview')])
    readFileSync(path.join(ROOT, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (!/\.join\((['"`])(, | and )\1\)/.test(line)) return;
        if (!NOT_A_USER_LIST.some(([f, l]) => f.test(file) && l.test(line)))
          found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  assert.deepEqual(found, []);
  // and the check sees a planted one
  assert.ok(/\.join\((['"`])(, | and )\1\)/.test("names.join(', ')"));
});
