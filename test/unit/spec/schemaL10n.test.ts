// The schemas' descriptions in Simplified Chinese (l10n/schema.l10n.zh-cn.json, keyed by the
// English text): every user-visible string of the run-spec and sweep schemas has a translation that
// keeps its `code spans` (field names, values) as written, no entry is left over from an old text,
// and the translator picks the table by display language, an unknown or edited text staying English.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { SPEC_SCHEMA } from '../../../src/core/spec/fields';
import { codeSpans, schemaStrings, schemaTranslator } from '../../../src/core/spec/schemaL10n';
import { SWEEP_SCHEMA } from '../../../src/core/sweeps/schema';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const ZH = JSON.parse(readFileSync(path.join(ROOT, 'l10n', 'schema.l10n.zh-cn.json'), 'utf8')) as Record<
  string,
  string
>;
const ALL = [...new Set([...schemaStrings(SPEC_SCHEMA), ...schemaStrings(SWEEP_SCHEMA)])];

test('the schema walk finds descriptions, markdown descriptions, enum descriptions and x-expect texts', () => {
  assert.ok(ALL.length > 150, `only ${ALL.length} strings`);
  assert.ok(ALL.includes(SPEC_SCHEMA.properties!.amp.properties!.level.description!));
  assert.ok(ALL.includes(SPEC_SCHEMA.properties!.data.properties!.sampling.markdownDescription!));
  assert.ok(ALL.includes(SPEC_SCHEMA.properties!.amp.properties!.level['x-enumDescriptions']![2]));
  assert.ok(ALL.includes(SPEC_SCHEMA.properties!.device.properties!.ids['x-expect']!));
  assert.ok(ALL.includes(SWEEP_SCHEMA.properties!.sampler['x-enumDescriptions']![0]));
  // values are not text
  assert.ok(!ALL.includes('O2') && !ALL.includes('run'));
});

test('every schema string has a zh-cn translation in Chinese with the same code spans', () => {
  const missing = ALL.filter((en) => !Object.hasOwn(ZH, en));
  assert.deepEqual(missing, [], 'schema texts without a zh-cn entry in l10n/schema.l10n.zh-cn.json');
  const notChinese = ALL.filter((en) => !/[\u4e00-\u9fff]/.test(ZH[en]));
  assert.deepEqual(notChinese, [], 'zh-cn entries with no Chinese in them');
  const spans = ALL.filter((en) => codeSpans(en).join('\u0000') !== codeSpans(ZH[en]).join('\u0000')).map((en) => ({
    en: codeSpans(en),
    zh: codeSpans(ZH[en]),
  }));
  assert.deepEqual(spans, [], 'a translation keeps every `code span` of its English text, as written');
});

test('no zh-cn entry is left over from a text the schemas no longer have', () => {
  const known = new Set(ALL);
  assert.deepEqual(
    Object.keys(ZH).filter((k) => !known.has(k)),
    [],
  );
});

test('code spans are compared as written, whatever their order', () => {
  assert.deepEqual(codeSpans('set `a` then `b.c`'), ['a', 'b.c']);
  assert.notDeepEqual(codeSpans('`model.freeze: backbone`'), codeSpans('`model.freeze: none`'));
});

test('the translator follows the display language; other languages and edited texts stay English', () => {
  const en = SPEC_SCHEMA.properties!.amp.properties!.level.description!;
  for (const tag of ['zh-cn', 'zh-CN', 'zh-Hans', 'zh']) assert.equal(schemaTranslator(tag)(en), ZH[en], tag);
  assert.match(schemaTranslator('zh-cn')(en), /float16/);
  for (const tag of ['en', 'de', 'zh-tw', undefined]) assert.equal(schemaTranslator(tag)(en), en, String(tag));
  const edited = `${en} (edited)`;
  assert.equal(schemaTranslator('zh-cn')(edited), edited);
});
