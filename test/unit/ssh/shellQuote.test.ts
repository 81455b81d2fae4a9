import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { shellJoin, shellQuote } from '../../../src/core/ssh/shellQuote';

test('exact quoting', () => {
  assert.equal(shellQuote('/usr/bin/python3'), '/usr/bin/python3');
  assert.equal(shellQuote('--since'), '--since');
  assert.equal(shellQuote(''), "''");
  assert.equal(shellQuote('my runs'), "'my runs'");
  assert.equal(shellQuote("it's"), "'it'\\''s'");
  assert.equal(shellQuote('"q"'), `'"q"'`);
  assert.equal(shellQuote('$(touch x)'), "'$(touch x)'");
  assert.equal(shellQuote('`id`'), "'`id`'");
  assert.equal(shellQuote('a;b'), "'a;b'");
  assert.equal(shellQuote('a\nb'), "'a\nb'");
  assert.equal(shellQuote('ünï/日本'), "'ünï/日本'");
  assert.equal(shellQuote('~'), "'~'", 'no tilde expansion');
  assert.equal(shellQuote('A=1'), "'A=1'", 'a bare first word would be an assignment');
  assert.equal(shellQuote("'"), "''\\'''");
});

test('shellJoin quotes each element once', () => {
  assert.equal(shellJoin(['attach', '/r/my run', '--since', '3']), "attach '/r/my run' --since 3");
  assert.equal(shellJoin([]), '');
});

const nasty = [
  '',
  ' ',
  'plain',
  'two words',
  "it's",
  `"double" and 'single'`,
  '$(touch MARKER)',
  '`touch MARKER`',
  '; touch MARKER',
  '&& touch MARKER ||',
  'line\nbreak',
  'tab\there',
  'back\\slash\\',
  '$HOME ${PATH} $1 $@ $*',
  '*',
  '~',
  '!event',
  'A=1',
  '#not a comment',
  'ünïcødé 日本語 🚀',
  '-n',
  "''''",
  "\\'",
];

// The real test: what a POSIX shell reads back is exactly what went in, and nothing runs.
for (const sh of ['sh', 'bash']) {
  test(`${sh} reads every element back unchanged`, () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'aft-quote-'));
    try {
      const out = execFileSync(sh, ['-c', `printf '%s\\0' ${shellJoin(nasty)}`], { cwd: dir, encoding: 'utf8' });
      assert.deepEqual(out.split('\0').slice(0, -1), nasty);
      assert.equal(existsSync(path.join(dir, 'MARKER')), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
