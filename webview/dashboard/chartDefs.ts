// The charts of each mode, as definitions (title, series, axes) that ChartPanel builds: the series
// are fixed when a chart is built, so they depend only on the mode, the runs and the theme.
import type uPlot from 'uplot';
import type { RunData } from '../../src/shared/dashboardProtocol';
import { axis, line, markers, stepAxis, type ChartDef, type Theme } from './charts';
import { compareLabel } from './panels';

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
        title: 'Training loss (smoothed)',
        logScales: ['y'],
        seriesToggles: false,
        seriesRuns: perRun,
        options: () => ({
          series: [{ label: 'step' }, ...runNames.map((n, i) => line(n, c[i % c.length]))],
          axes: [stepAxis(t), axis(t, { size: 60 })],
        }),
      },
      {
        id: 'accuracy',
        title: 'Validation accuracy (%)',
        logScales: ['y'],
        seriesToggles: false,
        seriesRuns: perRun,
        options: () => ({
          series: [
            { label: 'step' },
            ...runNames.map((n, i) => line(n, c[i % c.length], { points: { show: true, size: 6 } })),
          ],
          scales: { y: { range: [0, 100] } },
          axes: [stepAxis(t), axis(t, { size: 60 })],
        }),
      },
      {
        id: 'lossScale',
        title: 'Loss scale (log2) with overflowed steps',
        seriesToggles: false,
        seriesRuns: [...perRun, ...runNames.map((_, i) => i)],
        options: () => ({
          series: [
            { label: 'step' },
            ...runNames.map((n, i) => line(n, c[i % c.length], { scale: 'ls' })),
            ...runNames.map((n, i) => markers(`${n} overflow`, c[i % c.length], { scale: 'ls' })),
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
      title: 'Training loss',
      logScales: ['y'],
      options: () => ({
        series: [
          { label: 'step' },
          line('loss', c[0], { width: 1, alpha: 0.35 } as Partial<uPlot.Series>),
          line('smoothed', c[0], { width: 2 }),
          line('eval loss', c[1], { points: { show: true, size: 6 } }),
        ],
        axes: [stepAxis(t), axis(t, { size: 60 })],
      }),
    },
    {
      id: 'accuracy',
      title: 'Accuracy (%): validation, and training from the train step',
      logScales: ['y'],
      options: () => ({
        series: [
          { label: 'step' },
          line('val acc %', c[2], { points: { show: true, size: 6 } }),
          // dashed: a looser measure beside the top-1 line (1.0 by definition with 5 classes or fewer)
          line('top-5 %', c[2], { width: 1, dash: [4, 4], points: { show: true, size: 4 } } as Partial<uPlot.Series>),
          // train.ema: the moving average's val accuracy beside the raw weights' (a gap without EMA)
          line('EMA val acc %', c[5], { points: { show: true, size: 5 } }),
          // per step from the train step's own forward pass (step.train_acc), smoothed like the loss
          line('train acc %', c[0], { width: 1.5 }),
        ],
        scales: { y: { range: [0, 100] } },
        axes: [stepAxis(t), axis(t, { size: 60 })],
      }),
    },
    {
      id: 'lr',
      title: 'Learning rate',
      height: 150,
      logScales: ['y'],
      options: () => ({ series: [{ label: 'step' }, line('lr', c[3])], axes: [stepAxis(t), axis(t, { size: 60 })] }),
    },
    {
      id: 'lossScale',
      title: 'Loss scale (log2) and overflows',
      options: () => ({
        series: [
          { label: 'step' },
          line('loss scale', c[4], { scale: 'ls', width: 2 }),
          markers('overflow', t.red, { scale: 'ls' }),
          line(`overflows / ${run?.amp.window || LOSS_SCALE_WINDOW_FALLBACK} steps`, c[6], {
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
      title: 'Throughput and step time',
      logScales: ['ips', 'ms'],
      options: () => ({
        series: [
          { label: 'step' },
          line('images/s', c[2], { scale: 'ips' }),
          line('step ms', c[1], { scale: 'ms' }),
          line('data wait ms', c[3], { scale: 'ms', dash: [4, 3] }),
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
      title: 'Host CPU (%): all cores, and the training process (% of one core)',
      options: () => ({
        series: [
          { label: 'step' },
          line('host CPU %', c[0], { scale: 'pct' }),
          line('process CPU % of a core', c[1], { scale: 'proc', dash: [4, 3] }),
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
      title: 'Host memory and the training process’s RSS (GB)',
      logScales: ['y'],
      options: () => ({
        series: [
          { label: 'step' },
          line('host used', c[2]),
          line('host total', c[2], { width: 1, dash: [2, 4] }),
          line('process RSS', c[3]),
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
      title: 'NPU utilisation (%) and temperature (°C)',
      options: () => ({
        series: [
          { label: 'step' },
          ...deviceIds.flatMap((id, i) => [
            line(`NPU ${id} util %`, c[i % c.length]),
            line(`NPU ${id} °C`, c[i % c.length], { dash: [4, 3] }),
          ]),
        ],
        axes: [stepAxis(t), axis(t, { size: 50 })],
      }),
    },
    {
      id: 'hbm',
      title: 'HBM (GB) and power (W)',
      options: () => ({
        series: [
          { label: 'step' },
          ...deviceIds.flatMap((id, i) => [
            line(`NPU ${id} HBM used`, c[i % c.length], { scale: 'gb' }),
            line(`NPU ${id} HBM total`, c[i % c.length], { scale: 'gb', width: 1, dash: [2, 4] }),
            line(`NPU ${id} W`, c[i % c.length], { scale: 'w', dash: [6, 3] }),
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
