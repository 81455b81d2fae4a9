// Issue 19's events in the dashboard's series store: the EMA weights' val accuracy as its own
// column, unfreeze and lr_reduced as labelled chart marks (their labels in the page's language).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { RunSeriesStore } from '../../../src/core/dashboard/seriesStore';
import type { RunMark } from '../../../src/shared/dashboardProtocol';
import { markLabel } from '../../../webview/dashboard/words';
import * as page from '../../../webview/shared/l10n';
import { EventMaker, recorded } from '../fixtures/dashboard/events';

const readZh = () =>
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8')) as Record<
    string,
    string
  >;
const newStore = () => new RunSeriesStore('k', { name: 'knobs', target: 'This machine' });

function evalAt(m: EventMaker, step: number, extra: Record<string, unknown> = {}) {
  return m.ev('eval', { epoch: step / 4, step, val_loss: 1, val_acc: 0.5, per_class_acc: [], confusion: [], ...extra });
}

test("the EMA weights' val accuracy is a column beside val acc; an eval without EMA has null there", () => {
  const m = new EventMaker();
  const s = newStore();
  s.ingest([
    m.started(),
    evalAt(m, 4),
    evalAt(m, 8, { ema: { val_loss: 0.9, val_acc: 0.625 } }),
    evalAt(m, 12, { ema: null }),
  ]);
  assert.deepEqual(s.evalBlock().valAccEma, [null, 0.625, null]);
  assert.deepEqual(s.evalBlock().valAcc, [0.5, 0.5, 0.5], 'the raw weights keep their own column');
  assert.deepEqual(s.evalBlock(1).valAccEma, [0.625, null]);
});

test('unfreeze and lr_reduced become labelled marks at their steps; other events do not', () => {
  const m = new EventMaker();
  const s = newStore();
  s.ingest([
    m.started(),
    m.step(1),
    m.ev('unfreeze', { epoch: 2, step: 4, freeze: 'up_to:layer3', unfrozen: ['layer4'], trainable_params: 20 }),
    m.step(5),
    m.ev('lr_reduced', {
      epoch: 3,
      step: 8,
      lr: 0.001,
      previous_lr: 0.01,
      metric: 'val_loss',
      best: 0.7,
      best_epoch: 1,
    }),
    m.ev('unfreeze', { epoch: 4, step: 12, freeze: 'none', unfrozen: ['stem', 'layer1'], trainable_params: 161 }),
    m.ev('warning', { code: 'x', message: 'y' }),
    m.ev('unfreeze', { epoch: 5, freeze: 'none', unfrozen: [] }), // no step: nowhere to draw it
  ]);
  assert.deepEqual(s.marks, [
    { step: 4, kind: 'unfreeze', label: 'unfreeze layer4', args: ['layer4'] },
    { step: 8, kind: 'lr_reduced', label: 'lr 0.01→0.001', args: ['0.01', '0.001'] },
    { step: 12, kind: 'unfreeze', label: 'unfreeze stem+layer1', args: ['stem+layer1'] },
  ]);
});

test("a mark's label in the page's language: zh-cn from its args, English without a bundle, an older host's label as it came", () => {
  const marks: RunMark[] = [
    { step: 4, kind: 'unfreeze', label: 'unfreeze stem+layer1', args: ['stem+layer1'] },
    { step: 8, kind: 'lr_reduced', label: 'lr 0.05→0.005', args: ['0.05', '0.005'] },
  ];
  try {
    page.setBundle(readZh(), 'zh-cn');
    assert.deepEqual(marks.map(markLabel), ['解冻 stem+layer1', '学习率 0.05→0.005']);
    assert.equal(markLabel({ step: 1, kind: 'unfreeze', label: 'unfreeze layer4' }), 'unfreeze layer4');
    page.setBundle({}, 'en');
    assert.deepEqual(marks.map(markLabel), ['unfreeze stem+layer1', 'lr 0.05→0.005']);
  } finally {
    page.setBundle({}, 'en');
  }
});

test('a resume that replays events from its checkpoint does not draw a mark twice', () => {
  const m = new EventMaker();
  const s = newStore();
  const unfreeze = () =>
    m.ev('unfreeze', { epoch: 2, step: 4, freeze: 'none', unfrozen: ['layer4'], trainable_params: 20 });
  s.ingest([m.started(), m.step(4), unfreeze(), m.step(8)]);
  const rewinds = s.rewinds;
  s.ingest([m.started(), unfreeze(), m.step(5)]);
  assert.deepEqual(
    s.marks.map((k) => k.step),
    [4],
  );
  assert.ok(s.rewinds > rewinds, 'marks the UI holds changed: the session sends a snapshot');
});

test('marks at the same step (a plateau at the end of an epoch, the next epoch unfreezing) are both kept', () => {
  const s = newStore();
  s.ingest(recorded('knobs-run'));
  assert.deepEqual(
    s.marks.map((k) => [k.step, k.kind]),
    [
      [8, 'lr_reduced'],
      [8, 'unfreeze'],
      [12, 'lr_reduced'],
      [16, 'lr_reduced'],
    ],
  );
  assert.equal(s.marks[0].label, 'lr 0.05→0.005');
  assert.equal(s.marks[1].label, 'unfreeze layer4');
  assert.deepEqual(s.evalBlock().valAccEma, [0.25, 0.25, 0.2916666666666667, 0.2916666666666667]);
});
