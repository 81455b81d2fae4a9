// How to run:  node --import tsx bench/runs_table.ts [--runs 1000] [--reps 15]
//
// The Runs Table's host side with many runs: an `ls` answer of N synthetic runs (each with a full
// resolved spec of ~70 fields flattened as the runner flattens it, a summary.json's figures, meta
// and a health verdict: what `ls` prints for a real run), as the text that arrives from the runner.
// Timed, as the median of --reps runs each:
//   baseline  JSON.parse of that text (the least any reader of `ls` pays);
//   load      JSON.parse + parseListing (the checks runRunner applies) + the table model's rows and
//             its first snapshot (differing columns, default sort): what opening the table costs;
//   sort      re-sorting by a result column and by a spec column, with the snapshot sent after it;
//   filter    a text filter (`freeze=none`) and a numeric range, with the snapshot.
// Each is printed in ms and as a ratio to the baseline, with the listing's and snapshot's sizes.
import { performance } from 'node:perf_hooks';
import { parseListing } from '../src/core/runs/runIndex';
import { RunsTableModel } from '../src/core/runs/tableModel';
import type { ListedRunDetail } from '../src/core/runs/presentation';
import { flattenSpec } from '../src/core/runs/specDiff';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const RUNS = arg('runs', 1000);
const REPS = arg('reps', 15);

/** A deterministic pseudo-random stream, so every run of the bench lists the same runs. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

function specOf(i: number, r: () => number): object {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  return {
    name: `sweep-${i % 40}`,
    data: {
      train: '/data/flowers/train',
      val: null,
      val_split: 0.1,
      image_size: pick([160, 224, 288]),
      batch_size: pick([16, 32, 64]),
      workers: 4,
      prefetch: null,
      augment: pick(['basic', 'randaugment', 'none']),
      mixup: 0,
      cutmix: 0,
      sampling: 'natural',
    },
    model: {
      backbone: pick(['resnet50', 'resnet18', 'mobilenet_v2']),
      pretrained: '/weights/resnet50.ckpt',
      preprocess: 'imagenet',
      freeze: pick(['backbone', 'none', 'stages:2']),
      num_classes: null,
      unfreeze: [],
    },
    train: {
      epochs: pick([10, 20, 30]),
      optimizer: 'momentum',
      lr: +(10 ** (-4 + 3 * r())).toPrecision(3),
      momentum: 0.9,
      weight_decay: 1e-4,
      lr_schedule: 'cosine',
      warmup_steps: 0,
      seed: 1,
      max_nonfinite_steps: 20,
      lr_step_size: null,
      lr_step_gamma: 0.1,
      cache_features: false,
      cache_views: 1,
      backbone_lr_mult: 1,
      layer_decay: 1,
      accumulate_steps: 1,
      plateau: { metric: 'val_loss', factor: 0.1, patience: 3, min_delta: 0, min_lr: 0 },
      early_stopping: { metric: 'val_acc', patience: 0, min_delta: 0 },
      label_smoothing: 0,
      class_weights: null,
      ema: null,
    },
    amp: { level: 'O2', loss_scale: 'dynamic', init_scale: 16777216, scale_factor: 2, scale_window: 2000 },
    sink: { enabled: true, size: 1 },
    checkpoint: { every_steps: 1000, keep_max: 5, keep_best: true, format: 'ckpt' },
    device: { target: 'Ascend', ids: [i % 8], nodes: [], master_port: null, telemetry_s: 5 },
  };
}

function listingText(n: number): string {
  const r = rng(7);
  const runs = Array.from({ length: n }, (_, i) => {
    const started = 1_790_000_000 + i * 600;
    const acc = 0.5 + 0.45 * r();
    return {
      run_id: `sweep-${i % 40}-${i.toString(16).padStart(4, '0')}`,
      run_dir: `/home/u/ascend-runs/sweep-${i}`,
      state: i % 50 === 0 ? 'running' : i % 17 === 0 ? 'failed' : 'completed',
      pid: 1000 + i,
      host: 'atlas-800',
      started_at: started,
      ended_at: started + 500,
      exit_code: 0,
      name: `sweep-${i % 40}`,
      backbone: 'resnet50',
      epochs: 20,
      epoch: 20,
      step: 4000,
      loss: 0.3,
      best: { file: 'checkpoints/best.ckpt', epoch: 18, step: 3600, metrics: { val_acc: acc, val_loss: 0.4 } },
      summary: {
        state: 'completed',
        started_at: started,
        ended_at: started + 500,
        duration_s: 500,
        updated_at: started + 500,
        epochs_done: 20,
        steps_done: 4000,
        total_steps: 4000,
        best_val_acc: acc,
        best_val_acc_epoch: 18,
        final_val_acc: acc - 0.01,
        best_val_loss: 0.4 + r(),
        img_per_s: 800 + 400 * r(),
        skipped_updates: Math.floor(r() * 20),
      },
      spec_fields: flattenSpec(specOf(i, r)),
      problem: null,
      meta: { name: null, notes: '', tags: i % 10 === 0 ? ['baseline'] : ['sweep'] },
      display_name: `sweep-${i % 40} (${i.toString(16).padStart(4, '0')})`,
      health: { verdict: 'healthy', reasons: [] },
    };
  });
  return JSON.stringify({ root: '/home/u/ascend-runs', runs });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function time(fn: () => unknown): number {
  const ts: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    fn();
    ts.push(performance.now() - t0);
  }
  return median(ts);
}

const text = listingText(RUNS);
const listing = [{ targetId: 'ssh:atlas', targetLabel: 'atlas-800', runs: [] as ListedRunDetail[] }];
const load = () => {
  const { runs } = parseListing(JSON.parse(text));
  const model = new RunsTableModel('bench', false);
  model.setListings([{ ...listing[0], runs }], [], 1_790_700_000);
  return { model, snapshot: model.snapshot() };
};
const { model, snapshot } = load();

const baseline = time(() => JSON.parse(text));
const loadMs = time(load);
let flip = 0;
const sortResult = time(() => {
  model.handle({ type: 'sort', key: flip++ % 2 ? 'best_val_acc' : 'img_per_s' });
  return model.snapshot();
});
const sortSpec = time(() => {
  model.handle({ type: 'sort', key: 'spec:train.lr' });
  return model.snapshot();
});
const none = { text: '', tags: [], states: [], ranges: [] };
const filterMs = time(() => {
  model.handle({
    type: 'filter',
    filter: { ...none, text: 'freeze=none', ranges: [{ key: 'best_val_acc', min: 0.7, max: null }] },
  });
  const s = model.snapshot();
  model.handle({ type: 'filter', filter: none });
  return s;
});
model.handle({ type: 'filter', filter: none });
const spec = snapshot.columns.filter((c) => c.spec).length;
const fmt = (ms: number) => `${ms.toFixed(1)} ms (${(ms / baseline).toFixed(1)}x JSON.parse)`;
console.log(`runs table, ${RUNS} runs, median of ${REPS}:`);
console.log(
  `  listing text        ${(text.length / 1024 / 1024).toFixed(2)} MiB; snapshot ${(JSON.stringify(snapshot).length / 1024 / 1024).toFixed(2)} MiB, ${snapshot.columns.length} columns (${spec} differing spec fields)`,
);
console.log(`  baseline JSON.parse ${baseline.toFixed(1)} ms`);
console.log(`  load (parse, check, rows, first snapshot)  ${fmt(loadMs)}`);
console.log(`  sort by a result column + snapshot          ${fmt(sortResult)}`);
console.log(`  sort by a spec column + snapshot            ${fmt(sortSpec)}`);
console.log(`  text + range filter + snapshot              ${fmt(filterMs)}`);
