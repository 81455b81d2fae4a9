// The dashboard as a tracker, host side and the UI's pure parts: the config panel's rows (spec.json
// over run_started, bounded), train accuracy and event times in the step block, host telemetry
// rows, Compare Runs' differing settings, and the epoch and wall-clock x axes' ticks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { differingSettings, flatten, MAX_CONFIG_ROWS, runConfig } from '../../../src/core/dashboard/runConfig';
import { RunSeriesStore } from '../../../src/core/dashboard/seriesStore';
import { DashboardSession } from '../../../src/core/dashboard/session';
import type { HostMessage } from '../../../src/shared/dashboardProtocol';
import { checkRunEvent } from '../../../src/shared/dashboardValidate';
import type { RunEvent, RunStartedEvent } from '../../../src/shared/eventsProtocol';
import { epochTicks, timeTicks } from '../../../webview/dashboard/xAxis';
import { EventMaker } from '../fixtures/dashboard/events';

function startedWith(m: EventMaker, spec: Record<string, unknown>, extra: Record<string, unknown> = {}): RunEvent {
  const e = m.started() as RunStartedEvent;
  return { ...e, spec, ...extra } as RunEvent;
}

test('the Config tab shows the per-weight preprocessing record and the spec object that set part of it', () => {
  const m = new EventMaker();
  const e = startedWith(
    m,
    { name: 'a', model: { preprocess: { preset: 'auto', mean: [0.5, 0.5, 0.5] } } },
    {
      preprocess: {
        name: 'timm',
        interpolation: 'bicubic',
        crop_pct: 0.9,
        rounding: 'floor',
        mean: [127.5, 127.5, 127.5],
        std: [127.5, 127.5, 127.5],
        why: 'timm weights from the hub: their config.json',
        crop_mode: 'center',
        input_size: 240,
        source: 'hub_config',
        config: 'http://127.0.0.1:1/timm/efficientnet_b1.ra4/resolve/main/config.json',
        overridden: ['mean'],
      },
    },
  ) as RunStartedEvent;
  const c = runConfig(e)!;
  const p = Object.fromEntries(c.preprocess.map((r) => [r.path, r.value]));
  assert.deepEqual(
    [p.mean, p.source, p.input_size, p.overridden],
    ['[127.5,127.5,127.5]', 'hub_config', '240', '["mean"]'],
  );
  assert.ok(p.config.endsWith('/config.json'));
  const spec = Object.fromEntries(c.spec.map((r) => [r.path, r.value]));
  assert.equal(spec['model.preprocess.mean'], '[0.5,0.5,0.5]');
});

test('the config is the spec flattened to dotted rows, with the weights, preprocessing and versions', () => {
  const m = new EventMaker();
  const e = startedWith(
    m,
    { name: 'a', model: { backbone: 'resnet50', pretrained: 'mindcv:resnet50' }, train: { lr: 0.01, epochs: 3 } },
    {
      versions: { runner: '0.9.0', mindspore: '2.10.0', python: '3.11.2' },
      device: { target: 'CPU', ids: [0], host: 'box', workers: 2 },
      pretrained: {
        file: '/c/r.ckpt',
        origin: 'mindcv',
        variant: 'default',
        source: 'mindcv:resnet50',
        sha256: 'ab',
        loaded: ['x', 'y'],
        missing: [],
      },
      preprocess: {
        name: 'mindcv',
        interpolation: 'bilinear',
        crop_pct: 0.875,
        rounding: 'floor',
        mean: [1],
        std: [2],
        why: 'w',
      },
    },
  ) as RunStartedEvent;
  const c = runConfig(e)!;
  assert.equal(c.specSource, 'run_started');
  const spec = Object.fromEntries(c.spec.map((r) => [r.path, r.value]));
  assert.equal(spec['train.lr'], '0.01');
  assert.equal(spec['model.backbone'], 'resnet50');
  const w = Object.fromEntries(c.weights.map((r) => [r.path, r.value]));
  assert.equal(w.source, 'mindcv:resnet50');
  assert.equal(w['loaded tensors'], '2');
  assert.equal(w['missing tensors'], '0');
  assert.ok(c.preprocess.some((r) => r.path === 'crop_pct' && r.value === '0.875'));
  const v = Object.fromEntries(c.versions.map((r) => [r.path, r.value]));
  assert.deepEqual([v.runner, v.mindspore, v.python, v['device.target']], ['0.9.0', '2.10.0', '3.11.2', 'CPU']);
  // spec.json, when the host could read it, wins over run_started's copy
  const fromFile = runConfig(e, { train: { lr: 0.5 } })!;
  assert.equal(fromFile.specSource, 'spec.json');
  assert.deepEqual(fromFile.spec, [{ path: 'train.lr', value: '0.5' }]);
});

test('a hostile spec costs a bounded table of strings', () => {
  const wide: Record<string, unknown> = {};
  for (let i = 0; i < MAX_CONFIG_ROWS + 50; i++) wide[`k${i}`] = 'x'.repeat(10_000);
  let deep: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < 100; i++) deep = { d: deep };
  const f = flatten({ ...wide, deep });
  assert.equal(f.rows.length, MAX_CONFIG_ROWS);
  assert.equal(f.dropped, 51);
  assert.ok(f.rows.every((r) => r.value.length <= 300));
  const d = flatten(deep);
  assert.equal(d.rows.length, 1, 'deeper than the cap: the rest of the object as one JSON value');
});

test('the store keeps train accuracy, event times and host samples; a run_started brings the config', () => {
  const m = new EventMaker();
  const s = new RunSeriesStore('k', { name: 'n', target: 'CPU' });
  s.ingest([m.started(), { ...m.step(1), train_acc: 0.25 } as RunEvent, m.step(2)]);
  s.ingest([m.ev('host', { cpu_pct: 50, mem_used_mb: 1000, mem_total_mb: 4000, rss_mb: 700, proc_cpu_pct: 180 })]);
  const b = s.stepRange(0, s.steps.length);
  assert.deepEqual(b.trainAcc, [0.25, null], 'an older runner: null');
  assert.equal(b.t!.length, 2);
  assert.ok(b.t![1] > b.t![0]);
  const hb = s.hostBlock();
  assert.deepEqual([hb.steps, hb.cpuPct, hb.rssMb, hb.procCpuPct], [[2], [50], [700], [180]]);
  assert.equal(s.header().stepsPerEpoch, 10);
  assert.equal(s.config()?.spec.find((r) => r.path === 'model.backbone')?.value, 'resnet50');
});

test('a wrong-typed train_acc or host field is repaired to null at the browser boundary', () => {
  const c = checkRunEvent({ v: 1, seq: 2, t: 1, type: 'step', epoch: 1, step: 1, loss: 1, train_acc: 'high' });
  assert.ok(c.ok && c.repaired === 'step.train_acc' && (c.event as { train_acc: unknown }).train_acc === null);
  const h = checkRunEvent({ v: 1, seq: 3, t: 1, type: 'host', cpu_pct: {}, rss_mb: 5 });
  assert.ok(h.ok && h.repaired === 'host.cpu_pct');
});

test('a live append carries the host rows and, once, the config that run_started brought', () => {
  const posts: HostMessage[] = [];
  const session = new DashboardSession({ mode: 'single', post: (p) => posts.push(p), appendIntervalMs: 0 });
  session.addRun('r0', { name: 'n', target: 'CPU' });
  session.receive({ type: 'ready', width: 500 });
  const snap = posts.at(-1) as Extract<HostMessage, { type: 'snapshot' }>;
  assert.equal(snap.runs[0].config, null);
  const m = new EventMaker();
  session.ingest('r0', [m.started(), m.step(1)]);
  const a1 = posts.at(-1) as Extract<HostMessage, { type: 'append' }>;
  assert.equal(a1.type, 'append');
  assert.ok(a1.config && a1.config.spec.length > 0);
  session.ingest('r0', [m.ev('host', { cpu_pct: 10, mem_used_mb: 1, mem_total_mb: 2, rss_mb: 1 })]);
  const a2 = posts.at(-1) as Extract<HostMessage, { type: 'append' }>;
  assert.equal(a2.config, undefined, 'the config is sent when it changes, not with every append');
  assert.deepEqual(a2.host?.cpuPct, [10]);
});

test('Compare Runs labels each run with its values of the settings that differ', () => {
  const posts: HostMessage[] = [];
  const session = new DashboardSession({ mode: 'compare', post: (p) => posts.push(p), appendIntervalMs: 0 });
  const specs = [
    { name: 'a', train: { lr: 0.01, epochs: 3 }, model: { backbone: 'resnet18' } },
    { name: 'b', train: { lr: 0.1, epochs: 3 }, model: { backbone: 'resnet18' } },
  ];
  specs.forEach((sp, i) => {
    session.addRun(`r${i}`, { name: sp.name, target: 'CPU' });
    session.ingest(`r${i}`, [startedWith(new EventMaker(), sp)]);
  });
  session.receive({ type: 'ready', width: 500 });
  const snap = posts.filter((p) => p.type === 'snapshot').at(-1) as Extract<HostMessage, { type: 'snapshot' }>;
  assert.deepEqual(
    snap.runs.map((r) => r.differs),
    [[{ path: 'train.lr', value: '0.01' }], [{ path: 'train.lr', value: '0.1' }]],
    'the name is the label already; equal settings are left out',
  );
  // a run whose spec is not known yet: every setting of the other differs from its "—"
  assert.deepEqual(differingSettings([undefined, specs[0]])[0], [
    { path: 'train.lr', value: '—' },
    { path: 'train.epochs', value: '—' },
    { path: 'model.backbone', value: '—' },
  ]);
});

test('the epoch axis puts ticks on whole epochs and labels them in epochs', () => {
  const t = epochTicks(9);
  assert.deepEqual(t.splits(1, 36, 1000), [9, 18, 27, 36]);
  assert.deepEqual(t.splits(1, 36, 1000).map(t.label), ['1', '2', '3', '4']);
  assert.equal(t.label(4.5), '0.5');
  assert.ok(t.splits(1, 9000, 300).length <= 300 / 70, 'not more ticks than fit');
});

test('the wall-clock axis puts ticks at the steps reached at round times, pauses included', () => {
  // 10 steps a second for 10 s, a 100 s pause (a stop and a resume), then 10 steps a second again
  const steps: number[] = [];
  const ts: number[] = [];
  for (let i = 1; i <= 200; i++) {
    steps.push(i);
    ts.push(i <= 100 ? 1000 + i / 10 : 1110 + (i - 100) / 10);
  }
  const t = timeTicks({ steps, t: ts } as never, 1000)!;
  assert.equal(t.label(100), '10s');
  assert.equal(t.label(200), '2m 00s');
  const splits = t.splits(1, 200, 1000);
  assert.ok(splits.length >= 3);
  // labels increase; across the pause the ticks crowd at step ~100 (time passed, no steps)
  const secs = splits.map((s) => t.label(s));
  assert.equal(new Set(secs).size, secs.length);
  assert.equal(timeTicks({ steps: [], t: [] } as never, 0), null);
});
