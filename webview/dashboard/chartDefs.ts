// The charts of each mode, as definitions (title, series, axes) that ChartPanel builds: the series
// are fixed when a chart is built, so they depend only on the mode, the runs and the theme.
import type uPlot from 'uplot';
import type { RunData } from '../../src/shared/dashboardProtocol';
import { axis, line, markers, stepAxis, type ChartDef, type Theme } from './charts';
import { compareLabel } from './panels';
import * as l10n from '../shared/l10n';

/** Overflow-count window when the host has not said (AmpHealth.window). */
export const LOSS_SCALE_WINDOW_FALLBACK = 100;

export function chartDefs(t: Theme, mode: 'single' | 'compare', runs: RunData[]): ChartDef[] {
  const c = t.palette;
  // Compare Runs: the display name and the settings that set the run apart
  const runNames = runs.map((r) => (mode === 'compare' ? compareLabel(r) : r.header.name));
  const log2Axis = (extra: Partial<uPlot.Axis> = {}) =>
    axis(t, {
      scale: 'ls',
      size: 60,
      values: (_u: uPlot, splits: number[]) => splits.map((v) => (v > 0 ? `2^${Math.round(Math.log2(v))}` : '')),
      ...extra,
    });
  if (mode === 'compare') {
    const perRun = [0, ...runNames.map((_, i) => i)];
    return [
      {
        id: 'loss',
        title: l10n.t('Training loss (smoothed)'),
        logScales: ['y'],
        seriesToggles: false,
        seriesRuns: perRun,
        options: () => ({
          series: [{ label: l10n.t('step') }, ...runNames.map((n, i) => line(n, c[i % c.length]))],
          axes: [stepAxis(t), axis(t, { size: 60 })],
        }),
      },
      {
        id: 'accuracy',
        title: l10n.t('Validation accuracy (%)'),
        logScales: ['y'],
        seriesToggles: false,
        seriesRuns: perRun,
        options: () => ({
          series: [
            { label: l10n.t('step') },
            ...runNames.map((n, i) => line(n, c[i % c.length], { points: { show: true, size: 6 } })),
          ],
          scales: { y: { range: [0, 100] } },
          axes: [stepAxis(t), axis(t, { size: 60 })],
        }),
      },
      {
        id: 'lossScale',
        title: l10n.t('Loss scale (log2) with overflowed steps'),
        seriesToggles: false,
        seriesRuns: [...perRun, ...runNames.map((_, i) => i)],
        options: () => ({
          series: [
            { label: l10n.t('step') },
            ...runNames.map((n, i) => line(n, c[i % c.length], { scale: 'ls' })),
            ...runNames.map((n, i) => markers(l10n.t('{0} overflow', n), c[i % c.length], { scale: 'ls' })),
          ],
          scales: { ls: { distr: 3, log: 2 } },
          axes: [stepAxis(t), log2Axis()],
        }),
      },
    ];
  }
  const run = runs[0];
  const deviceIds = run ? Object.keys(run.devices.devices).sort((a, b) => Number(a) - Number(b)) : [];
  return [
    {
      id: 'loss',
      title: l10n.t('Training loss'),
      logScales: ['y'],
      options: () => ({
        series: [
          { label: l10n.t('step') },
          line(l10n.t('loss'), c[0], { width: 1, alpha: 0.35 } as Partial<uPlot.Series>),
          line(l10n.t('smoothed'), c[0], { width: 2 }),
          line(l10n.t('eval loss'), c[1], { points: { show: true, size: 6 } }),
        ],
        axes: [stepAxis(t), axis(t, { size: 60 })],
      }),
    },
    {
      id: 'accuracy',
      title: l10n.t('Accuracy (%): validation, and training from the train step'),
      logScales: ['y'],
      options: () => ({
        series: [
          { label: l10n.t('step') },
          line(l10n.t('val acc %'), c[2], { points: { show: true, size: 6 } }),
          // dashed: a looser measure beside the top-1 line (1.0 by definition with 5 classes or fewer)
          line(l10n.t('top-5 %'), c[2], {
            width: 1,
            dash: [4, 4],
            points: { show: true, size: 4 },
          } as Partial<uPlot.Series>),
          // train.ema: the moving average's val accuracy beside the raw weights' (a gap without EMA)
          line(l10n.t('EMA val acc %'), c[5], { points: { show: true, size: 5 } }),
          // per step from the train step's own forward pass (step.train_acc), smoothed like the loss
          line(l10n.t('train acc %'), c[0], { width: 1.5 }),
        ],
        scales: { y: { range: [0, 100] } },
        axes: [stepAxis(t), axis(t, { size: 60 })],
      }),
    },
    {
      id: 'lr',
      title: l10n.t('Learning rate'),
      height: 150,
      logScales: ['y'],
      options: () => ({
        series: [{ label: l10n.t('step') }, line(l10n.t('lr'), c[3])],
        axes: [stepAxis(t), axis(t, { size: 60 })],
      }),
    },
    {
      id: 'lossScale',
      title: l10n.t('Loss scale (log2) and overflows'),
      options: () => ({
        series: [
          { label: l10n.t('step') },
          line(l10n.t('loss scale'), c[4], { scale: 'ls', width: 2 }),
          markers(l10n.t('overflow'), t.red, { scale: 'ls' }),
          line(l10n.t('overflows / {0} steps', run?.amp.window || LOSS_SCALE_WINDOW_FALLBACK), c[6], {
            scale: 'count',
            width: 1,
            dash: [4, 3],
          }),
        ],
        scales: { ls: { distr: 3, log: 2 }, count: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [stepAxis(t), log2Axis(), axis(t, { scale: 'count', side: 1, size: 40, grid: { show: false } })],
      }),
    },
    {
      id: 'throughput',
      title: l10n.t('Throughput and step time'),
      logScales: ['ips', 'ms'],
      options: () => ({
        series: [
          { label: l10n.t('step') },
          line(l10n.t('images/s'), c[2], { scale: 'ips' }),
          line(l10n.t('step ms'), c[1], { scale: 'ms' }),
          line(l10n.t('data wait ms'), c[3], { scale: 'ms', dash: [4, 3] }),
        ],
        axes: [
          stepAxis(t),
          axis(t, { scale: 'ips', size: 60 }),
          axis(t, { scale: 'ms', side: 1, size: 60, grid: { show: false } }),
        ],
      }),
    },
    ...(deviceIds.length === 0 && run?.host?.steps.length ? hostDefs(t) : npuDefs(t, deviceIds)),
  ];
}

/** On a machine without NPUs: the host's CPU and memory and the training process's, in their place. */
function hostDefs(t: Theme): ChartDef[] {
  const c = t.palette;
  return [
    {
      id: 'hostCpu',
      title: l10n.t('Host CPU (%): all cores, and the training process (% of one core)'),
      options: () => ({
        series: [
          { label: l10n.t('step') },
          line(l10n.t('host CPU %'), c[0], { scale: 'pct' }),
          line(l10n.t('process CPU % of a core'), c[1], { scale: 'proc', dash: [4, 3] }),
        ],
        scales: { pct: { range: [0, 100] } },
        axes: [
          stepAxis(t),
          axis(t, { scale: 'pct', size: 50 }),
          axis(t, { scale: 'proc', side: 1, size: 50, grid: { show: false } }),
        ],
      }),
    },
    {
      id: 'hostMem',
      title: l10n.t('Host memory and the training process’s RSS (GB)'),
      logScales: ['y'],
      options: () => ({
        series: [
          { label: l10n.t('step') },
          line(l10n.t('host used'), c[2]),
          line(l10n.t('host total'), c[2], { width: 1, dash: [2, 4] }),
          line(l10n.t('process RSS'), c[3]),
        ],
        axes: [stepAxis(t), axis(t, { size: 50 })],
      }),
    },
  ];
}

function npuDefs(t: Theme, deviceIds: string[]): ChartDef[] {
  const c = t.palette;
  return [
    {
      id: 'npu',
      title: l10n.t('NPU utilisation (%) and temperature (°C)'),
      options: () => ({
        series: [
          { label: l10n.t('step') },
          ...deviceIds.flatMap((id, i) => [
            line(l10n.t('NPU {0} util %', id), c[i % c.length]),
            line(l10n.t('NPU {0} °C', id), c[i % c.length], { dash: [4, 3] }),
          ]),
        ],
        axes: [stepAxis(t), axis(t, { size: 50 })],
      }),
    },
    {
      id: 'hbm',
      title: l10n.t('HBM (GB) and power (W)'),
      options: () => ({
        series: [
          { label: l10n.t('step') },
          ...deviceIds.flatMap((id, i) => [
            line(l10n.t('NPU {0} HBM used', id), c[i % c.length], { scale: 'gb' }),
            line(l10n.t('NPU {0} HBM total', id), c[i % c.length], { scale: 'gb', width: 1, dash: [2, 4] }),
            line(l10n.t('NPU {0} W', id), c[i % c.length], { scale: 'w', dash: [6, 3] }),
          ]),
        ],
        axes: [
          stepAxis(t),
          axis(t, { scale: 'gb', size: 50 }),
          axis(t, { scale: 'w', side: 1, size: 50, grid: { show: false } }),
        ],
      }),
    },
  ];
}
