import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonlReader } from '../../../src/core/runs/jsonlReader';

test('lines split across chunks come out whole, in order', () => {
  const r = new JsonlReader();
  assert.deepEqual(r.feed('{"a":1}\n{"b"'), [{ a: 1 }]);
  assert.deepEqual(r.feed(':2}'), []);
  assert.deepEqual(r.feed('\n{"c":3}\n{"d":4}\n'), [{ b: 2 }, { c: 3 }, { d: 4 }]);
  assert.deepEqual(r.end(), []);
});

test('a torn last line is held, then reported at end of stream', () => {
  const bad: string[] = [];
  const r = new JsonlReader((line) => bad.push(line));
  assert.deepEqual(r.feed('{"seq":1}\n{"seq":2,"lo'), [{ seq: 1 }]);
  assert.deepEqual(r.end(), []);
  assert.deepEqual(bad, ['{"seq":2,"lo']);
});

test('a complete last line without a newline still counts', () => {
  const r = new JsonlReader();
  assert.deepEqual(r.feed('{"seq":1}'), []);
  assert.deepEqual(r.end(), [{ seq: 1 }]);
});

test('a multi-byte character split between chunks survives', () => {
  const bytes = Buffer.from('{"class":"café 猫"}\n', 'utf8');
  const split = bytes.indexOf(Buffer.from('é')) + 1; // inside the 2-byte character
  const cut = bytes.indexOf(Buffer.from('猫')) + 1; // inside the 3-byte character
  const r = new JsonlReader();
  const values = [
    ...r.feed(bytes.subarray(0, split)),
    ...r.feed(bytes.subarray(split, cut)),
    ...r.feed(bytes.subarray(cut)),
  ];
  assert.deepEqual(values, [{ class: 'café 猫' }]);
});

test('one byte at a time gives the same result', () => {
  const text = '{"n":"ü"}\r\n\n{"n":2}\n';
  const r = new JsonlReader();
  const values = [...Buffer.from(text)].flatMap((b) => r.feed(Buffer.of(b)));
  assert.deepEqual(values, [{ n: 'ü' }, { n: 2 }]);
});

test('a line that is not JSON is reported, not thrown, and reading goes on', () => {
  const bad: Array<[string, Error]> = [];
  const r = new JsonlReader((line, err) => bad.push([line, err]));
  assert.deepEqual(r.feed('{"ok":1}\nTraceback (most recent call last):\n{"ok":2}\n'), [{ ok: 1 }, { ok: 2 }]);
  assert.equal(bad.length, 1);
  assert.equal(bad[0][0], 'Traceback (most recent call last):');
  assert.ok(bad[0][1] instanceof SyntaxError);
});
