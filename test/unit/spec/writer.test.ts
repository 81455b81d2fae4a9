import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parseSpecText } from '../../../src/core/spec/file';
import { checkSpec, specDefaults } from '../../../src/core/spec/schema';
import { gist, newSpecText, writeSpec, yamlScalar } from '../../../src/core/spec/writer';

test('New Run Spec: every field at the recipe default, a comment on each, and it validates', () => {
  const text = newSpecText('flowers', 'yaml');
  const spec = parseSpecText(text, 'x.ascend.yaml') as Record<string, Record<string, unknown>>;
  const defaults = specDefaults() as Record<string, Record<string, unknown>>;
  assert.deepEqual(spec, { ...defaults, name: 'flowers', data: { ...defaults.data, train: 'data/train' } });
  assert.deepEqual(checkSpec(spec), []);
  // A comment above every field: the file explains itself.
  const lines = text.split('\n');
  const fields = lines.filter((l) => /^ {2}\w+:/.test(l));
  const schemaFields = Object.values(defaults)
    .filter((v) => typeof v === 'object' && v !== null && !Array.isArray(v))
    .reduce((n, section) => n + Object.keys(section).length, 0);
  assert.ok(schemaFields >= 35);
  assert.equal(fields.length, schemaFields, 'every field of every section is written');
  for (const f of fields) assert.match(lines[lines.indexOf(f) - 1], /^ {2}# \S/, f);
  assert.match(text, /# How much of the network runs in float16\.\n {2}level: O2/);
  // JSON has no comments: the same object.
  assert.deepEqual(JSON.parse(newSpecText('flowers', 'json')), spec);
});

test("the wizard's spec written as YAML reads back as the same object, tricky strings included", () => {
  const spec = {
    name: 'no',
    data: { train: '/data/a: b #1', batch_size: 16, val: '123' },
    model: { backbone: 'resnet18', pretrained: null, freeze: 'up_to:layer3' },
    train: { epochs: 3, lr: 0.001, momentum: 0.9, optimizer: 'momentum' },
    amp: { level: 'O2', loss_scale: 'dynamic' },
    device: { ids: [0] },
  };
  for (const format of ['yaml', 'json'] as const) {
    assert.deepEqual(parseSpecText(writeSpec(spec, format), `x.ascend.${format}`), spec, format);
  }
  for (const s of ['true', 'null', 'yes', '1e3', '.5', '~', 'a:', ' x', 'é'])
    assert.equal(
      parseSpecText(`v: ${yamlScalar(s)}\n`, 'x.yaml') &&
        (parseSpecText(`v: ${yamlScalar(s)}\n`, 'x.yaml') as { v: unknown }).v,
      s,
      s,
    );
});

/** A snippet body with every placeholder at its default (the first choice of a choice list). */
function expand(body: string[]): string {
  return body
    .join('\n')
    .replace(/\$\{\d+\|([^,|]*)[^}]*\}/g, '$1')
    .replace(/\$\{\d+:([^}]*)\}/g, '$1')
    .replace(/\$\d+/g, '');
}

test('snippets expand to specs the schema accepts', () => {
  const snippets = JSON.parse(
    readFileSync(path.join(__dirname, '..', '..', '..', 'snippets', 'ascend-run.json'), 'utf8'),
  ) as Record<string, { prefix: string[]; body: string[]; description: string }>;
  const got: Record<string, string[]> = {};
  for (const [name, s] of Object.entries(snippets)) {
    const spec = parseSpecText(expand(s.body), 'x.ascend.yaml') as Record<string, Record<string, unknown>>;
    got[name] = checkSpec(spec).map((p) => `${p.path}: ${p.message}`);
    assert.ok(s.description.length > 40 && s.prefix.length > 0, name);
  }
  assert.deepEqual(got, {
    'Linear probe (frozen backbone)': [],
    'Full fine-tune (cosine schedule)': [],
    'Multi-NPU': [],
  });
  const probe = parseSpecText(expand(snippets['Linear probe (frozen backbone)'].body), 'x.yaml') as {
    model: { freeze: string };
  };
  assert.equal(probe.model.freeze, 'backbone');
  const full = parseSpecText(expand(snippets['Full fine-tune (cosine schedule)'].body), 'x.yaml') as {
    model: { freeze: string };
    train: { lr_schedule: string };
  };
  assert.equal(full.model.freeze, 'none');
  assert.equal(full.train.lr_schedule, 'cosine');
});

test('New Run Spec comments are whole sentences, never cut with "...", wrapped when long', () => {
  const text = newSpecText('flowers', 'yaml', 'images/flowers');
  const comments = text.split('\n').filter((l) => /^\s*#/.test(l));
  assert.ok(comments.length > 20);
  for (const c of comments) {
    assert.doesNotMatch(c, /\.\.\.$/, c);
    assert.ok(c.length <= 116, c);
  }
  assert.match(text, /^ {2}train: images\/flowers$/m);
  assert.deepEqual(gist('A short one. And more.'), ['A short one.']);
  assert.equal(gist('word '.repeat(40), 50).length, 4); // 10 words of 4 letters to a 49-character line
});
