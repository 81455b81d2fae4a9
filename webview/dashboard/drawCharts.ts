// Giving the charts their data, per mode: only a chart whose data changed is redrawn (uPlot redraws
// on setData), the others follow the shared step range when it moves.
import type uPlot from 'uplot';
import type { DeviceBlock, RunData } from '../../src/shared/dashboardProtocol';
import type { ChartPanel } from './charts';
import { LOSS_SCALE_WINDOW_FALLBACK } from './chartDefs';
import { SingleRunColumns } from './live';
import { renderPerClass } from './panels';
import { joinOnX, overflowMarkers, smooth } from './series';
import * as l10n from '../shared/l10n';

type Cols = (number | null)[];

/** What one render gives the drawer: the built charts, whether they are new, the smoothing and the x range shown. */
export interface DrawFrame {
  panels: Map<string, ChartPanel>;
  /** The charts were just built (they hold nothing yet). */
  fresh: boolean;
  smoothing: number;
  range: { min: number; max: number } | null;
}

/** What the charts hold now, so that a render redraws only those whose data changed. */
export class ChartDrawer {
  /** The single-run charts' derived columns, extended in place on appends. */
  private readonly live = new SingleRunColumns();
  private drawnDevices: { block: DeviceBlock; rows: number } | undefined;
  private drawnCompare = '';
  private compareRuns: RunData[] | undefined;
  private drawnRange = '';

  /** The x range every chart shows changed (the run grew, or a zoom): charts not redrawn for new data follow it. */
  private rangeMoved(r: { min: number; max: number } | null): boolean {
    const key = r ? `${r.min}:${r.max}` : '';
    if (key === this.drawnRange) return false;
    this.drawnRange = key;
    return true;
  }

  /** One run's charts: only the charts with new data are given it. */
  single(run: RunData, f: DrawFrame): void {
    const s = run.steps;
    const e = run.evals;
    const p = (id: string) => f.panels.get(id)!;
    const fresh = f.fresh;
    const waiting = s.steps.length === 0 ? l10n.t('Waiting for the first step…') : undefined;
    const hasSteps = s.steps.length > 0;
    const window = run.amp.window || LOSS_SCALE_WINDOW_FALLBACK;
    const changed = this.live.update(s, e, f.smoothing, window);
    const stepsNew = fresh || changed.steps;
    const evalsNew = fresh || changed.evals;
    const d = run.devices;
    const devicesNew = fresh || this.drawnDevices?.block !== d || this.drawnDevices.rows !== d.steps.length;
    this.drawnDevices = { block: d, rows: d.steps.length };
    const moved = this.rangeMoved(f.range);
    // Only the charts with new data are given it (uPlot redraws a chart on setData); the others
    // follow the shared x range when it moved.
    const follow = (id: string, isNew: boolean) => {
      if (!isNew && moved) p(id).refreshScale();
      return isNew;
    };

    const live = this.live;
    // Rows appended to the columns the charts hold (not a rebuild): a chart redraws only if they
    // change a pixel (ChartPanel.append). An eval can fill a row the loss chart already has.
    const appended = !fresh && !live.rebuilt;
    const give = (id: string, data: uPlot.AlignedData | null, note?: string, onlyAppended = appended) => {
      if (data !== null && onlyAppended) p(id).append(data);
      else p(id).update(data, note);
    };
    if (follow('loss', stepsNew || evalsNew)) {
      give(
        'loss',
        hasSteps || e.steps.length ? (live.loss as unknown as uPlot.AlignedData) : null,
        waiting,
        appended && !evalsNew,
      );
    }
    if (follow('accuracy', evalsNew || (stepsNew && !!s.trainAcc))) {
      // train accuracy per step row (smoothed as the loss is) beside the evals' rows, on one x
      const train = s.trainAcc ? smooth(s.trainAcc, f.smoothing).map((v) => (v === null ? null : v * 100)) : [];
      const hasTrain = train.some((v) => v !== null);
      p('accuracy').update(
        e.steps.length || hasTrain
          ? (joinOnX([
              { x: e.steps, ys: [live.accPercent, live.top5Percent, live.emaPercent] },
              { x: hasTrain ? s.steps : [], ys: [hasTrain ? train : []] },
            ]) as uPlot.AlignedData)
          : null,
        e.steps.length || hasTrain
          ? undefined
          : l10n.t('Validation accuracy appears after the first epoch (none when the run has no validation set).'),
      );
    }
    renderPerClass(p('accuracy').extra, run.header.classes, e, 3);
    // unfreeze and lr_reduced events, labelled, where the loss and the rate show their effect
    p('loss').setMarks(run.marks ?? []);
    p('lr').setMarks(run.marks ?? []);
    if (follow('lr', stepsNew)) give('lr', hasSteps ? ([s.steps, s.lr] as uPlot.AlignedData) : null, waiting);

    if (follow('lossScale', stepsNew)) {
      const applies = run.amp.applies !== false;
      const scaled = applies && s.lossScale.some((v) => v !== null);
      give(
        'lossScale',
        scaled ? ([s.steps, s.lossScale, live.markers, live.overflowCounts] as uPlot.AlignedData) : null,
        !hasSteps
          ? waiting
          : scaled
            ? undefined
            : !applies && run.amp.notApplicable
              ? run.amp.notApplicable
              : l10n.t('This run has no loss scaling (amp.loss_scale none), so there is no scale to chart.'),
      );
    }
    if (follow('throughput', stepsNew))
      give('throughput', hasSteps ? ([s.steps, s.imgPerS, s.stepMs, s.dataMs] as uPlot.AlignedData) : null, waiting);

    const ids = Object.keys(d.devices).sort((a, b) => Number(a) - Number(b));
    if (f.panels.has('hostCpu')) return this.host(run, f, follow);
    const npuNew = follow('npu', devicesNew);
    if (!follow('hbm', devicesNew) || !npuNew) return;
    const noDevices = l10n.t(
      'No NPU telemetry in this run (npu-smi was not where it ran) and no host samples (an older runner, or device.telemetry_s 0).',
    );
    if (d.steps.length && ids.length) {
      const mb2gb = (v: number | null) => (v === null ? null : v / 1024);
      p('npu').update([
        d.steps,
        ...ids.flatMap((id) => [d.devices[id].util, d.devices[id].tempC]),
      ] as uPlot.AlignedData);
      p('hbm').update([
        d.steps,
        ...ids.flatMap((id) => [
          d.devices[id].hbmUsedMb.map(mb2gb),
          d.devices[id].hbmTotalMb.map(mb2gb),
          d.devices[id].powerW,
        ]),
      ] as uPlot.AlignedData);
    } else {
      p('npu').update(null, noDevices);
      p('hbm').update(null, noDevices);
    }
  }

  /** The host charts in the NPU charts' place (a run without NPUs). */
  private host(run: RunData, f: DrawFrame, follow: (id: string, isNew: boolean) => boolean): void {
    const hb = run.host;
    if (!hb) return;
    const isNew = f.fresh || this.drawnHost?.block !== hb || this.drawnHost.rows !== hb.steps.length;
    this.drawnHost = { block: hb, rows: hb.steps.length };
    const cpuNew = follow('hostCpu', isNew);
    if (!follow('hostMem', isNew) || !cpuNew) return;
    const gb = (v: number | null) => (v === null ? null : v / 1024);
    f.panels.get('hostCpu')!.update([hb.steps, hb.cpuPct, hb.procCpuPct] as uPlot.AlignedData);
    f.panels
      .get('hostMem')!
      .update([hb.steps, hb.memUsedMb.map(gb), hb.memTotalMb.map(gb), hb.rssMb.map(gb)] as uPlot.AlignedData);
  }

  private drawnHost: { block: NonNullable<RunData['host']>; rows: number } | undefined;

  /** Several runs overlaid: redrawn when any run has new rows or the smoothing changed. */
  compare(runs: RunData[], f: DrawFrame): void {
    const p = (id: string) => f.panels.get(id)!;
    // Snapshots replace every run (chartsFresh via a rebuild, or new arrays: a new key below).
    const drawn = `${f.smoothing}|${runs.map((r) => `${r.steps.steps.length}/${r.evals.steps.length}/${r.steps.steps.at(-1)}`).join(',')}`;
    const moved = this.rangeMoved(f.range);
    if (!f.fresh && drawn === this.drawnCompare && this.compareRuns === runs) {
      if (moved) for (const panel of f.panels.values()) panel.refreshScale();
      return;
    }
    this.drawnCompare = drawn;
    this.compareRuns = runs;
    const any = runs.some((r) => r.steps.steps.length > 0);
    p('loss').update(
      any
        ? (joinOnX(
            runs.map((r) => ({ x: r.steps.steps, ys: [smooth(r.steps.loss, f.smoothing)] })),
          ) as uPlot.AlignedData)
        : null,
      any ? undefined : l10n.t('Waiting for the first step…'),
    );
    const evals = runs.some((r) => r.evals.steps.length > 0);
    p('accuracy').update(
      evals
        ? (joinOnX(
            runs.map((r) => ({ x: r.evals.steps, ys: [r.evals.valAcc.map((v) => (v === null ? null : v * 100))] })),
          ) as uPlot.AlignedData)
        : null,
      evals ? undefined : l10n.t('No evaluation yet.'),
    );
    const scaled = runs.some((r) => r.steps.lossScale.some((v) => v !== null));
    const joined = joinOnX(runs.map((r) => ({ x: r.steps.steps, ys: [r.steps.lossScale as Cols] })));
    const marks = joinOnX(runs.map((r) => ({ x: r.steps.steps, ys: [overflowMarkers(r.steps)] })));
    // Both joins share one x (the union of the same step columns).
    p('lossScale').update(
      scaled ? ([joined[0], ...joined.slice(1), ...marks.slice(1)] as uPlot.AlignedData) : null,
      scaled ? undefined : l10n.t('No run here uses loss scaling.'),
    );
  }
}
