// The language server's sweep-spec support (src/server/sweepLanguage.ts) on real documents: the
// sweep schema's problems at their fields, space keys checked as run-spec fields, completion of
// space keys with run-spec field paths, hover with the run-spec field's docs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { completeSweep, diagnoseSweep, hoverSweep } from '../../../src/server/sweepLanguage';
import { parseSpecDocument } from '../../../src/server/specDocument';

const URI = 'file:///w/lr.ascend-sweep.yaml';
function open(text: string) {
  const td = TextDocument.create(URI, 'ascend-sweep', 1, text);
  return { td, doc: parseSpecDocument(text, URI) };
}

const GOOD = `name: lr
base: resnet.ascend.yaml
space:
  train.lr: {low: 1.0e-4, high: 1.0e-1, log: true}
  model.freeze: {choices: [backbone, none]}
objective: {metric: best_val_acc}
trials: 8
sampler: tpe
`;

test('a good sweep spec has no diagnostics', () => {
  const { td, doc } = open(GOOD);
  assert.deepEqual(diagnoseSweep(doc, td), []);
});

test('schema problems and unknown space fields are reported at their lines, naming the field', () => {
  const { td, doc } = open(
    GOOD.replace('trials: 8', 'trials: many')
      .replace('train.lr:', 'train.lrr:')
      .replace('sampler: tpe', 'sampler: tpe\nsampler2: x'),
  );
  const ds = diagnoseSweep(doc, td).map((d) => ({ ...d, message: String(d.message) }));
  const trials = ds.find((d) => d.message.startsWith('trials:'));
  assert.ok(trials, JSON.stringify(ds.map((d) => d.message)));
  assert.equal(trials.range.start.line, 6);
  const space = ds.find((d) => d.message.startsWith('space.train.lrr:'));
  assert.ok(space);
  assert.match(space.message, /did you mean "train\.lr"/);
  assert.equal(space.range.start.line, 3);
  assert.ok(ds.some((d) => /sampler2/.test(d.message) && d.range.start.line === 8));
});

test('space keys complete with run-spec field paths; sweep keys at the top', () => {
  const text = 'space:\n  \n';
  const { td, doc } = open(text);
  const items = completeSweep(doc, td, text.indexOf('\n  ') + 3);
  const labels = items.map((i) => i.label);
  assert.ok(labels.includes('train.lr') && labels.includes('model.freeze'), labels.join(','));
  assert.ok(!labels.includes('name') && !labels.includes('device.ids'), 'the sweep sets name and devices itself');
  const top = completeSweep(open('\n').doc, open('\n').td, 0).map((i) => i.label);
  for (const k of ['base', 'space', 'objective', 'trials', 'sampler', 'pruner']) assert.ok(top.includes(k), k);
});

test('hover on a space key shows the run-spec field, on a sweep key the sweep schema', () => {
  const { td, doc } = open(GOOD);
  const lr = hoverSweep(doc, td, GOOD.indexOf('train.lr') + 2);
  assert.match(JSON.stringify(lr?.contents), /train\.lr/);
  const trials = hoverSweep(doc, td, GOOD.indexOf('trials') + 1);
  assert.ok(trials, 'hover on trials');
});
