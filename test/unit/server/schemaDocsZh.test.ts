// The schemas' field descriptions in the language server's hover and completion follow the client's
// locale: Simplified Chinese for zh-cn (l10n/schema.l10n.zh-cn.json), English otherwise, with the
// field names, values and code spans as written. Run-spec and sweep-spec documents alike.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { CompletionItem, Hover, MarkupContent } from 'vscode-languageserver';
import { SPEC_SCHEMA } from '../../../src/core/spec/fields';
import { SWEEP_SCHEMA } from '../../../src/core/sweeps/schema';
import { hover } from '../../../src/server/actions';
import { complete } from '../../../src/server/completion';
import * as l10n from '../../../src/server/l10n';
import { parseSpecDocument } from '../../../src/server/specDocument';
import { completeSweep, hoverSweep } from '../../../src/server/sweepLanguage';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const ZH = JSON.parse(readFileSync(path.join(ROOT, 'l10n', 'schema.l10n.zh-cn.json'), 'utf8')) as Record<
  string,
  string
>;
const spec = SPEC_SCHEMA.properties!;
const LEVEL = spec.amp.properties!.level;
const LR = spec.train.properties!.lr;

afterEach(() => l10n.setLocale(undefined));

/** A document with `|` where the cursor is. */
function at(text: string, fileName: string) {
  const offset = text.indexOf('|');
  const clean = text.replace('|', '');
  const td = TextDocument.create(`file:///w/${fileName}`, 'ascend-run', 1, clean);
  return { td, doc: parseSpecDocument(clean, fileName), offset };
}
const hoverText = (h: Hover | undefined) => (h?.contents as MarkupContent | undefined)?.value ?? '';
const docText = (i: CompletionItem | undefined) =>
  typeof i?.documentation === 'string' ? i.documentation : (i?.documentation?.value ?? '');
const specHover = (text: string) => {
  const { td, doc, offset } = at(text, 'x.ascend.yaml');
  return hoverText(hover(doc, td, offset));
};
const specComplete = (text: string) => {
  const { td, doc, offset } = at(text, 'x.ascend.yaml');
  return complete(doc, td, offset, '/w');
};

test('zh-cn: a field hover says the description, what it accepts and what the values do in Chinese', () => {
  l10n.setLocale('zh-cn');
  const text = specHover('amp:\n  le|vel: O2\n');
  assert.ok(text.includes(ZH[LEVEL.description!]), text);
  assert.match(text, /^\*\*`amp\.level`\*\* · 默认值 `"O2"` · `O0`、`O1`、`O2`、`O3`、`auto` 之一$/m);
  // the value written: what it does
  assert.ok(text.includes(`**\`O2\`**: ${ZH[LEVEL['x-enumDescriptions']![2]]}`), text);
  // no value yet: every value
  assert.ok(specHover('amp:\n  le|vel:\n').includes(`- \`O0\`: ${ZH[LEVEL['x-enumDescriptions']![0]]}`));
  assert.ok(!text.includes(LEVEL.description!), 'no English description left');
  // a number's range, and a path field's words
  assert.match(specHover('data:\n  val_sp|lit: 0.2\n'), /数值，>= 0\.0 且 <= 0\.9/);
  assert.match(specHover('data:\n  tr|ain: d\n'), /文件夹路径（相对于本文件，可用 `~`）/);
  // a markdownDescription, code spans as written
  const sampling = specHover('data:\n  sampl|ing: balanced\n');
  assert.ok(sampling.includes(ZH[spec.data.properties!.sampling.markdownDescription!]), sampling);
  assert.match(sampling, /`train\.seed \+ epoch`/);
});

test('other locales: the same hover in English', () => {
  for (const locale of [undefined, 'en', 'de']) {
    l10n.setLocale(locale);
    const text = specHover('amp:\n  le|vel: O2\n');
    assert.ok(text.includes(LEVEL.description!), `${locale}: ${text}`);
    assert.match(text, /· default `"O2"` · one of `O0`, `O1`, `O2`, `O3`, `auto`$/m);
    assert.doesNotMatch(text, /[\u4e00-\u9fff]/);
    assert.match(specHover('data:\n  val_sp|lit: 0.2\n'), /a number >= 0\.0 and <= 0\.9/);
  }
});

test('zh-cn: completion documents keys and enum values in Chinese; English otherwise', () => {
  l10n.setLocale('zh-cn');
  const lr = specComplete('train:\n  |\n').find((i) => i.label === 'lr');
  assert.ok(docText(lr).includes(ZH[LR.description!]), docText(lr));
  assert.equal(lr?.detail, `默认值 ${JSON.stringify(LR.default)}`);
  const o2 = specComplete('amp:\n  level: |\n').find((i) => i.label === 'O2');
  assert.equal(docText(o2), ZH[LEVEL['x-enumDescriptions']![2]]);
  l10n.setLocale('en');
  const lrEn = specComplete('train:\n  |\n').find((i) => i.label === 'lr');
  assert.ok(docText(lrEn).includes(LR.description!));
  assert.equal(lrEn?.detail, `default ${JSON.stringify(LR.default)}`);
  const o2En = specComplete('amp:\n  level: |\n').find((i) => i.label === 'O2');
  assert.equal(docText(o2En), LEVEL['x-enumDescriptions']![2]);
});

test('zh-cn: the sweep spec hover and completion use the sweep schema translations too', () => {
  const sweep = SWEEP_SCHEMA.properties!;
  const sweepAt = (text: string) => at(text, 'x.ascend-sweep.yaml');
  const run = () => {
    const h = sweepAt('name: s\nsam|pler: tpe\n');
    const hv = hoverText(hoverSweep(h.doc, h.td, h.offset));
    const c = sweepAt('sampler: |\n');
    const tpe = completeSweep(c.doc, c.td, c.offset).find((i) => i.label === 'tpe');
    const s = sweepAt('space:\n  train.l|r: {low: 0.001, high: 0.1}\n');
    const space = hoverText(hoverSweep(s.doc, s.td, s.offset));
    return { hv, tpe: docText(tpe), space };
  };
  l10n.setLocale('zh-cn');
  const zh = run();
  assert.equal(zh.hv, `**\`sampler\`**\n\n${ZH[sweep.sampler.description!]}`);
  assert.equal(zh.tpe, ZH[sweep.sampler['x-enumDescriptions']![0]]);
  assert.ok(zh.space.includes(ZH[LR.description!]), 'a space key shows the run-spec field, in Chinese');
  l10n.setLocale('en');
  const en = run();
  assert.equal(en.hv, `**\`sampler\`**\n\n${sweep.sampler.description}`);
  assert.equal(en.tpe, sweep.sampler['x-enumDescriptions']![0]);
  assert.ok(en.space.includes(LR.description!));
});
