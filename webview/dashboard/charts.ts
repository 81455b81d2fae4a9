// uPlot charts that share one step axis: a synchronised cursor (uPlot's cursor.sync) and one zoom
// that the app owns (a drag on any chart zooms all of them, a double click or Reset zooms out).
// About 630 lines: uPlot's options, axes, series and the shared cursor and zoom belong together.
import uPlot from 'uplot';
import type { RunMark } from '../../src/shared/dashboardProtocol';
import { h, setText } from './dom';
import { drawEventMarks } from './eventMarks';
import type { XTicks } from './xAxis';
import * as l10n from '../shared/l10n';

export interface Theme {
  fg: string;
  muted: string;
  grid: string;
  background: string;
  font: string;
  /** Distinct series colours, from VS Code's chart palette. */
  palette: string[];
  red: string;
}

function cssVar(style: CSSStyleDeclaration, name: string, fallback: string): string {
  const v = style.getPropertyValue(name).trim();
  return v || fallback;
}

/** Reads the theme's colours from CSS variables (VS Code's, or the page's fallbacks). */
export function readTheme(): Theme {
  const s = getComputedStyle(document.body);
  const fg = cssVar(s, '--vscode-foreground', '#cccccc');
  return {
    fg,
    muted: cssVar(s, '--vscode-descriptionForeground', fg),
    grid: cssVar(s, '--af-grid', 'rgba(128,128,128,0.25)'),
    background: cssVar(s, '--vscode-editor-background', '#1e1e1e'),
    font: `11px ${cssVar(s, '--vscode-font-family', 'sans-serif')}`,
    palette: [
      cssVar(s, '--vscode-charts-blue', '#3794ff'),
      cssVar(s, '--vscode-charts-orange', '#d18616'),
      cssVar(s, '--vscode-charts-green', '#89d185'),
      cssVar(s, '--vscode-charts-purple', '#b180d7'),
      cssVar(s, '--vscode-charts-yellow', '#cca700'),
      cssVar(s, '--vscode-charts-red', '#f14c4c'),
      cssVar(s, '--vscode-charts-foreground', fg),
    ],
    red: cssVar(s, '--vscode-charts-red', '#f14c4c'),
  };
}

export interface ChartContext {
  syncKey: string;
  /** The zoomed step range, or null for the whole run. */
  zoom(): { min: number; max: number } | null;
  /** The whole run's step range (every chart shows the same one). */
  full(): { min: number; max: number } | null;
  onZoom(min: number, max: number): void;
  onReset(): void;
  /** The x axis's tick positions (steps) and labels when it reads other than steps (epoch, wall-clock). */
  xTicks?(): XTicks | null;
  /** The chart's log-scale choice and its hidden series (by label), kept by the app across rebuilds. */
  isLog?(chartId: string): boolean;
  setLog?(chartId: string, on: boolean): void;
  hiddenSeries?(chartId: string): ReadonlySet<string>;
  setSeriesShown?(chartId: string, label: string, shown: boolean): void;
}

export interface ChartDef {
  id: string;
  title: string;
  /** Everything but size, x scale, cursor and hooks, which the panel adds. */
  options(theme: Theme): Pick<uPlot.Options, 'series' | 'axes'> & { scales?: uPlot.Scales };
  height?: number;
  /** The scales a "Log scale" toggle turns logarithmic (none: the chart has no toggle). */
  logScales?: string[];
  /** Checkboxes that show or hide each series (default true; Compare Runs toggles whole runs instead). */
  seriesToggles?: boolean;
  /** Compare Runs: the run index of each series (index 0 is x), for the per-run visibility toggles. */
  seriesRuns?: number[];
}

export function axis(theme: Theme, extra: Partial<uPlot.Axis> = {}): uPlot.Axis {
  return {
    stroke: theme.muted,
    font: theme.font,
    grid: { stroke: theme.grid, width: 1 },
    ticks: { stroke: theme.grid, width: 1 },
    ...extra,
  };
}

/** Steps are whole numbers: ticks at 1, 2, 5 times powers of ten, never at 1.5. */
const STEP_INCRS = Array.from({ length: 10 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

export function stepAxis(theme: Theme): uPlot.Axis {
  return axis(theme, { incrs: STEP_INCRS, label: undefined });
}

export function line(label: string, stroke: string, extra: Partial<uPlot.Series> = {}): uPlot.Series {
  // uPlot's default points: drawn while they are sparse (one step is still visible), hidden when dense.
  return { label, stroke, width: 1.5, spanGaps: true, paths: envelopeOrLine(stroke), ...extra };
}

const linearPaths = uPlot.paths.linear!();

/** A dense series as columns of `bucket` canvas pixels: each one's lowest and highest y. */
interface DenseColumns {
  color: string;
  left: number;
  bucket: number;
  half: number;
  lo: Float64Array;
  hi: Float64Array;
  /** Lines across runs of empty columns (spanGaps), as thin quads. */
  links: Path2D | null;
}
const denseColumns = new WeakMap<uPlot, Map<number, DenseColumns>>();

/**
 * A line while the series has fewer rows than the plot has pixel columns; past that, each column
 * of two CSS pixels (the host's own downsampling bucket) as a bar from its lowest to its highest
 * value (joined to the previous column), which the drawSeries hook fills with fillRect. uPlot's own line through thousands of rows zigzags from the
 * minimum to the maximum of every column, and stroking that path (round joins, anti-aliased) was
 * most of every redraw of a million-step run: in software rasterisation (a GPU-less or headless
 * browser) 40-150 ms a chart on a busy 2-core machine, against a few ms for the same columns as
 * rectangles. The bars cover the pixels the zigzag did, give or take its width and a pixel.
 */
function envelopeOrLine(color: string): uPlot.Series.PathBuilder {
  return (u, seriesIdx, idx0, idx1) => {
    const cache = denseColumns.get(u) ?? new Map<number, DenseColumns>();
    denseColumns.set(u, cache);
    const { left, top, width, height } = u.bbox;
    if (idx1 - idx0 + 1 <= width) {
      cache.delete(seriesIdx);
      return linearPaths(u, seriesIdx, idx0, idx1);
    }
    const xs = u.data[0];
    const ys = u.data[seriesIdx];
    const series = u.series[seriesIdx];
    const scale = series.scale ?? 'y';
    const half = Math.max(0.5, ((series.width ?? 1) * devicePixelRatio) / 2);
    const bucket = Math.max(1, Math.round(2 * devicePixelRatio));
    const cols = Math.ceil(width / bucket) + 1;
    const lo = new Float64Array(cols).fill(Infinity);
    const hi = new Float64Array(cols).fill(-Infinity);
    const yMin = top - 2 * half;
    const yMax = top + height + 2 * half;
    const xPos = toCanvas(u, 'x');
    const yPos = toCanvas(u, scale);
    let links: Path2D | null = null;
    let prevCol = -1;
    let prevY = 0;
    for (let i = idx0; i <= idx1; i++) {
      const v = ys[i];
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      const c = Math.floor((xPos(xs[i]) - left) / bucket);
      if (c < 0 || c >= cols) continue;
      const y = Math.min(yMax, Math.max(yMin, yPos(v)));
      if (c !== prevCol && prevCol >= 0) {
        if (c === prevCol + 1) {
          // The segment from the previous column's last value: part of this column's bar.
          if (prevY < lo[c]) lo[c] = prevY;
          if (prevY > hi[c]) hi[c] = prevY;
        } else {
          links ??= new Path2D();
          const x0 = left + (prevCol + 0.5) * bucket;
          const x1 = left + (c + 0.5) * bucket;
          links.moveTo(x0, prevY - half);
          links.lineTo(x1, y - half);
          links.lineTo(x1, y + half);
          links.lineTo(x0, prevY + half);
          links.closePath();
        }
      }
      if (y < lo[c]) lo[c] = y;
      if (y > hi[c]) hi[c] = y;
      prevCol = c;
      prevY = y;
    }
    cache.set(seriesIdx, { color, left, bucket, half, lo, hi, links });
    return { stroke: null, fill: null, clip: null, band: null, flags: 0 };
  };
}

/** A scale's value to canvas pixels; a linear one as a * v + b (two calls instead of one per row). */
function toCanvas(u: uPlot, key: string): (v: number) => number {
  if ((u.scales[key]?.distr ?? 1) !== 1) return (v: number) => u.valToPos(v, key, true);
  const b = u.valToPos(0, key, true);
  const a = u.valToPos(1, key, true) - b;
  return (v: number) => a * v + b;
}

/**
 * Whether rows [from, to) of a series fall inside the columns its last draw filled (within half a
 * pixel), so that drawing them would change nothing. False for a series drawn as a line.
 */
function coveredByLastDraw(u: uPlot, seriesIdx: number, from: number, to: number): boolean {
  const d = denseColumns.get(u)?.get(seriesIdx);
  if (!d) return false;
  const xs = u.data[0];
  const ys = u.data[seriesIdx];
  const xPos = toCanvas(u, 'x');
  const yPos = toCanvas(u, u.series[seriesIdx].scale ?? 'y');
  const { top, height } = u.bbox;
  for (let i = from; i < to; i++) {
    const v = ys[i];
    if (v === null || v === undefined || !Number.isFinite(v)) continue;
    const c = Math.floor((xPos(xs[i]) - d.left) / d.bucket);
    if (c < 0 || c >= d.lo.length) continue; // outside the plot (zoomed in)
    if (d.lo[c] === Infinity) return false;
    const y = Math.min(top + height + 2 * d.half, Math.max(top - 2 * d.half, yPos(v)));
    if (y < d.lo[c] - 0.5 || y > d.hi[c] + 0.5) return false;
  }
  return true;
}

/** The drawSeries hook: fills a dense series' columns (see envelopeOrLine). */
export function drawDenseColumns(u: uPlot, seriesIdx: number): void {
  const d = denseColumns.get(u)?.get(seriesIdx);
  if (!d) return;
  const ctx = u.ctx;
  ctx.save();
  ctx.globalAlpha = u.series[seriesIdx].alpha ?? 1;
  ctx.fillStyle = d.color;
  const { lo, hi, half, left, bucket } = d;
  // Neighbouring columns within half a pixel of each other are one rectangle (a flat stretch).
  for (let c = 0; c < lo.length;) {
    if (lo[c] === Infinity) {
      c++;
      continue;
    }
    let top = lo[c];
    let bottom = hi[c];
    let end = c + 1;
    while (
      end < lo.length &&
      lo[end] !== Infinity &&
      Math.abs(lo[end] - top) < 0.5 &&
      Math.abs(hi[end] - bottom) < 0.5
    ) {
      top = Math.min(top, lo[end]);
      bottom = Math.max(bottom, hi[end]);
      end++;
    }
    ctx.fillRect(left + c * bucket, top - half, (end - c) * bucket, bottom - top + 2 * half);
    c = end;
  }
  if (d.links) ctx.fill(d.links);
  ctx.restore();
}

/** Points only, no line: overflow markers and sparse per-epoch values. */
export function markers(label: string, color: string, extra: Partial<uPlot.Series> = {}): uPlot.Series {
  return {
    label,
    stroke: color,
    fill: color,
    width: 1,
    paths: () => null,
    points: { show: true, size: 7, stroke: color, fill: color, filter: spacedMarkers },
    ...extra,
  };
}

/**
 * The markers to draw: not one within 2 pixels of the last one drawn, which it would all but cover.
 * A million-step run has a thousand overflow markers a pixel or so apart; filling them as one
 * path of overlapping circles cost tens of milliseconds a redraw (software rasterisation).
 */
function spacedMarkers(u: uPlot, seriesIdx: number, show: boolean): number[] | null {
  if (!show) return null;
  const xs = u.data[0];
  const ys = u.data[seriesIdx];
  const scale = u.series[seriesIdx].scale ?? 'y';
  const { min = -Infinity, max = Infinity } = u.scales.x;
  const near = 2 * devicePixelRatio;
  const out: number[] = [];
  let lastX = -Infinity;
  let lastY = -Infinity;
  for (let i = 0; i < ys.length; i++) {
    const v = ys[i];
    if (v === null || v === undefined || xs[i] < min || xs[i] > max) continue;
    const x = u.valToPos(xs[i], 'x', true);
    const y = u.valToPos(v, scale, true);
    if (x - lastX < near && Math.abs(y - lastY) < near) continue;
    out.push(i);
    lastX = x;
    lastY = y;
  }
  return out;
}

/** One chart with its title bar, an empty-state note and a PNG export. */
export class ChartPanel {
  readonly box: HTMLElement;
  readonly extra: HTMLElement;
  private readonly body: HTMLElement;
  private readonly note: HTMLElement;
  private u: uPlot | undefined;
  private data: uPlot.AlignedData | null = null;
  private width = 400;
  /** Rows the chart had when it last drew. */
  private drawnRows = 0;
  /** Training events drawn as labelled markers (eventMarks.ts), on charts whose def asks for them. */
  private marks: readonly RunMark[] = [];

  constructor(
    readonly def: ChartDef,
    private readonly ctx: ChartContext,
    private theme: Theme,
    onPng: (panel: ChartPanel) => void,
  ) {
    const png = h(
      'vscode-button',
      {
        secondary: true,
        title: l10n.t('Save the "{0}" chart as PNG', def.title),
        // The accessible name the tests (and screen-reader users' habits) know: keep it short.
        'aria-label': l10n.t('Save {0} chart as PNG', def.title),
      },
      'PNG',
    );
    png.addEventListener('click', () => onPng(this));
    this.body = h('div', { class: 'chart-body', 'data-chart': def.id });
    this.note = h('p', { class: 'chart-note', hidden: true });
    this.extra = h('div', { class: 'chart-extra' });
    const controls = h('div', { class: 'chart-controls' });
    if (def.logScales?.length && ctx.isLog && ctx.setLog) {
      const id = `log-${def.id}`;
      const box = h('input', { type: 'checkbox', id, 'data-log': def.id }) as HTMLInputElement;
      box.checked = ctx.isLog(def.id);
      box.addEventListener('change', () => {
        ctx.setLog!(def.id, box.checked);
        this.rebuild();
      });
      controls.append(h('label', { for: id, class: 'toggle' }, box, ' ', l10n.t('Log scale')));
    }
    this.toggles = h('div', {
      class: 'series-toggles',
      role: 'group',
      'aria-label': l10n.t('{0}: series shown', def.title),
    });
    if (def.seriesToggles !== false && ctx.hiddenSeries) this.renderToggles();
    this.box = h(
      'section',
      { class: 'chart card', 'aria-label': def.title, 'data-chart-card': def.id },
      h('header', { class: 'chart-head' }, h('h3', {}, def.title), controls, png),
      this.toggles,
      this.note,
      this.body,
      this.extra,
    );
  }

  private readonly toggles: HTMLElement;
  private readonly boxes = new Map<string, HTMLInputElement>();

  /** One checkbox per series (keyboard: Tab to it, Space toggles), in sync with uPlot's legend clicks. */
  private renderToggles(): void {
    const hidden = this.ctx.hiddenSeries!(this.def.id);
    const series = this.def.options(this.theme).series.slice(1);
    const labels = [...new Set(series.map((s) => String(s.label ?? '')))];
    for (const [i, label] of labels.entries()) {
      const id = `show-${this.def.id}-${i}`;
      const box = h('input', { type: 'checkbox', id, 'data-series': label }) as HTMLInputElement;
      box.checked = !hidden.has(label);
      box.addEventListener('change', () => this.showSeries(label, box.checked));
      this.boxes.set(label, box);
      this.toggles.append(h('label', { for: id, class: 'toggle' }, box, ` ${label}`));
    }
  }

  private showSeries(label: string, shown: boolean): void {
    this.ctx.setSeriesShown?.(this.def.id, label, shown);
    const box = this.boxes.get(label);
    if (box && box.checked !== shown) box.checked = shown;
    const u = this.u;
    if (!u) return;
    u.series.forEach((s, i) => {
      if (i > 0 && s.label === label && s.show !== shown) u.setSeries(i, { show: shown });
    });
  }

  /** Compare Runs' runs hidden from this chart (kept through a rebuild). */
  private readonly hiddenRuns = new Set<number>();

  /** Compare Runs: shows or hides every series of run `run` (its line, its overflow markers). */
  setRunShown(run: number, shown: boolean): void {
    if (shown) this.hiddenRuns.delete(run);
    else this.hiddenRuns.add(run);
    const runs = this.def.seriesRuns;
    const u = this.u;
    if (!runs || !u) return;
    runs.forEach((r, i) => {
      if (i > 0 && r === run && u.series[i] && u.series[i].show !== shown) u.setSeries(i, { show: shown });
    });
  }

  /** The one-line note shown instead of the chart, or null when the chart draws (for tests). */
  noteText(): string | null {
    return this.note.hidden ? null : this.note.textContent;
  }

  /** Which series are drawn now (for tests): label to shown. */
  shown(): Record<string, boolean> {
    const out: Record<string, boolean> = {};
    this.u?.series.forEach((s, i) => {
      if (i > 0) out[String(s.label)] = s.show !== false;
    });
    return out;
  }

  /** The y scales as drawn now (for tests): distribution (1 linear, 3 log) and range. */
  scales(): Record<string, { distr: number; min: number | null; max: number | null }> {
    const out: Record<string, { distr: number; min: number | null; max: number | null }> = {};
    for (const [k, sc] of Object.entries(this.u?.scales ?? {}))
      if (k !== 'x') out[k] = { distr: sc.distr ?? 1, min: sc.min ?? null, max: sc.max ?? null };
    return out;
  }

  /** The x axis's tick labels as drawn now (for tests). */
  xLabels(): string[] {
    const ax = this.u?.axes[0] as (uPlot.Axis & { _values?: string[] }) | undefined;
    return ax?._values ? ax._values.map(String) : [];
  }

  /** Built again with the same data (a log-scale or x-axis change: uPlot fixes scales at creation). */
  rebuild(): void {
    if (!this.u) return;
    this.u.destroy();
    this.u = undefined;
    if (this.data) this.update(this.data);
  }

  /** New data (columns on one x); null hides the chart behind `note`. */
  update(data: uPlot.AlignedData | null, note?: string): void {
    this.data = data;
    // Written only on change: a live append should not dirty the page's style and layout.
    if (this.note.hidden !== !note) this.note.hidden = !note;
    setText(this.note, note ?? '');
    if (this.body.hidden !== (data === null)) this.body.hidden = data === null;
    if (data === null) return;
    if (this.logOn()) this.data = data = this.positiveOnly(data);
    if (!this.u) this.create();
    else this.u.setData(data, true);
    this.drawnRows = data[0].length;
  }

  /**
   * The same columns as the last update with rows appended (the arrays grew in place). Redraws only
   * when the new rows change a pixel: the x range moved by half a pixel or more, or a new value
   * falls outside what its column already shows. On a long run most live appends change nothing
   * (10 steps of a million are a hundredth of a pixel), and a redraw is most of an append's cost.
   */
  append(data: uPlot.AlignedData): void {
    if (this.logOn()) return this.update(data); // positiveOnly copies: nothing to extend in place
    const u = this.u;
    if (!u || this.data === null || !this.sameColumns(u, data) || !this.pictureUnchanged(u, data[0].length))
      return this.update(data);
    this.data = data;
  }

  private sameColumns(u: uPlot, data: uPlot.AlignedData): boolean {
    if (data.length !== u.data.length) return false;
    for (let k = 0; k < data.length; k++) if (data[k] !== u.data[k]) return false;
    return true;
  }

  private pictureUnchanged(u: uPlot, rows: number): boolean {
    const from = this.drawnRows;
    if (rows === from) return true;
    if (rows < from) return false;
    const r = this.ctx.zoom() ?? this.ctx.full();
    const { min, max } = u.scales.x;
    if (!r || min === undefined || max === undefined || max <= min) return false;
    const [wantMin, wantMax] = r.min === r.max ? [r.min - 1, r.max + 1] : [r.min, r.max];
    const pxPerStep = u.bbox.width / (max - min);
    if (Math.abs(wantMin - min) * pxPerStep >= 0.5 || Math.abs(wantMax - max) * pxPerStep >= 0.5) return false;
    for (let si = 1; si < u.series.length; si++) {
      if (!u.series[si].show) continue;
      const ys = u.data[si];
      let any = false;
      for (let i = from; i < rows && !any; i++) any = ys[i] !== null && ys[i] !== undefined;
      if (any && !coveredByLastDraw(u, si, from, rows)) return false;
    }
    return true;
  }

  private logOn(): boolean {
    return !!this.def.logScales?.length && !!this.ctx.isLog?.(this.def.id);
  }

  /** A log axis has no place for 0 or less: those values become gaps in the log scales' series. */
  private positiveOnly(data: uPlot.AlignedData): uPlot.AlignedData {
    const logged = new Set(this.def.logScales);
    const series = this.def.options(this.theme).series;
    return data.map((col, i) =>
      i > 0 && logged.has(series[i]?.scale ?? 'y')
        ? Array.from(col as ArrayLike<number | null>, (v) => (v !== null && v > 0 ? v : null))
        : col,
    ) as uPlot.AlignedData;
  }

  /** The event markers to draw; the chart redraws (without new data) only when they changed. */
  setMarks(marks: readonly RunMark[]): void {
    const key = (ms: readonly RunMark[]) => ms.map((m) => `${m.step}:${m.label}`).join('|');
    if (key(marks) === key(this.marks)) return;
    this.marks = marks;
    if (this.u) drawEventMarks(this.u, marks);
  }

  /** The data the chart draws now (for tests and exports). */
  current(): uPlot.AlignedData | null {
    return this.u ? this.u.data : null;
  }

  /** The step range the chart shows now. */
  xRange(): { min: number; max: number } | null {
    const x = this.u?.scales.x;
    return x && x.min !== undefined && x.max !== undefined ? { min: x.min, max: x.max } : null;
  }

  resize(width: number): void {
    const w = Math.max(200, Math.floor(width));
    // The same size again would redraw the chart for nothing (the resize observer fires on any change).
    if (w === this.width && this.u?.width === w) return;
    this.width = w;
    this.u?.setSize({ width: this.width, height: this.def.height ?? 200 });
  }

  /** Re-applies the shared x range (after a zoom or a reset). */
  refreshScale(): void {
    if (!this.u) return;
    const r = this.ctx.zoom() ?? this.ctx.full();
    if (!r) return;
    // A live append moves the end of a long run's axis by a fraction of a pixel: no redraw for that.
    const { min, max } = this.u.scales.x;
    if (min !== undefined && max !== undefined && max > min) {
      const px = this.u.bbox.width / (max - min);
      if (Math.abs(r.min - min) * px < 0.5 && Math.abs(r.max - max) * px < 0.5) return;
    }
    this.u.setScale('x', { min: r.min, max: r.max });
  }

  /** The chart as a PNG data: URL, drawn on the theme's background. */
  png(): string | null {
    if (!this.u) return null;
    const src = this.u.ctx.canvas;
    const out = document.createElement('canvas');
    out.width = src.width;
    out.height = src.height;
    const g = out.getContext('2d')!;
    g.fillStyle = this.theme.background;
    g.fillRect(0, 0, out.width, out.height);
    g.drawImage(src, 0, 0);
    return out.toDataURL('image/png');
  }

  destroy(): void {
    this.u?.destroy();
    this.u = undefined;
  }

  private create(): void {
    const base = this.def.options(this.theme);
    const ctx = this.ctx;
    const scales: uPlot.Scales = { ...base.scales };
    if (this.logOn())
      for (const k of this.def.logScales!) scales[k] = { ...scales[k], distr: 3, log: 10, range: undefined };
    const hidden = ctx.hiddenSeries?.(this.def.id);
    const runs = this.def.seriesRuns;
    base.series = base.series.map((s, i) =>
      i > 0 && (hidden?.has(String(s.label)) || (runs && this.hiddenRuns.has(runs[i]))) ? { ...s, show: false } : s,
    );
    const ticks = ctx.xTicks?.();
    if (ticks && base.axes?.[0]) {
      base.axes = [
        {
          ...base.axes[0],
          splits: (u: uPlot, _i: number, min: number, max: number) => ticks.splits(min, max, u.bbox.width),
          values: (_u: uPlot, splits: number[]) => splits.map((v) => ticks.label(v)),
        },
        ...base.axes.slice(1),
      ];
    }
    const opts: uPlot.Options = {
      width: this.width,
      height: this.def.height ?? 200,
      ...base,
      scales: {
        ...scales,
        x: {
          time: false,
          // Every chart shows the zoomed range, or the whole run's steps.
          range: (_u, min, max) => {
            const r = ctx.zoom() ?? ctx.full();
            if (!r) return [min, max];
            return r.min === r.max ? [r.min - 1, r.max + 1] : [r.min, r.max];
          },
        },
      },
      cursor: {
        sync: { key: ctx.syncKey },
        drag: { x: true, y: false, setScale: false },
        focus: { prox: 16 },
      },
      legend: { live: true },
      hooks: {
        // a click on uPlot's legend toggles a series too: the checkboxes follow it
        setSeries: [
          (u, i) => {
            const sr = i === null ? undefined : u.series[i];
            if (!sr) return;
            const label = String(sr.label);
            const box = this.boxes.get(label);
            if (box && box.checked !== (sr.show !== false)) {
              box.checked = sr.show !== false;
              ctx.setSeriesShown?.(this.def.id, label, box.checked);
            }
          },
        ],
        drawSeries: [drawDenseColumns],
        draw: [(u) => drawEventMarks(u, this.marks)],
        setSelect: [
          (u) => {
            if (u.select.width > 3) {
              const min = u.posToVal(u.select.left, 'x');
              const max = u.posToVal(u.select.left + u.select.width, 'x');
              ctx.onZoom(Math.round(min), Math.round(max));
            }
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          },
        ],
      },
    };
    this.u = new uPlot(opts, this.data!, this.body);
    this.u.over.addEventListener('dblclick', () => ctx.onReset());
  }
}
