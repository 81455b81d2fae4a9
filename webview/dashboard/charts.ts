// uPlot charts that share one step axis: a synchronised cursor (uPlot's cursor.sync) and one zoom
// that the app owns (a drag on any chart zooms all of them, a double click or Reset zooms out).
import uPlot from 'uplot';
import { h } from './dom';

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
}

export interface ChartDef {
  id: string;
  title: string;
  /** Everything but size, x scale, cursor and hooks, which the panel adds. */
  options(theme: Theme): Pick<uPlot.Options, 'series' | 'axes'> & { scales?: uPlot.Scales };
  height?: number;
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
  return { label, stroke, width: 1.5, spanGaps: true, ...extra };
}

/** Points only, no line: overflow markers and sparse per-epoch values. */
export function markers(label: string, color: string, extra: Partial<uPlot.Series> = {}): uPlot.Series {
  return { label, stroke: color, fill: color, width: 1, paths: () => null, points: { show: true, size: 7, stroke: color, fill: color }, ...extra };
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

  constructor(
    readonly def: ChartDef,
    private readonly ctx: ChartContext,
    private theme: Theme,
    onPng: (panel: ChartPanel) => void,
  ) {
    const png = h('vscode-button', { secondary: true, title: `Save the ${def.title} chart as PNG`, 'aria-label': `Save ${def.title} chart as PNG` }, 'PNG');
    png.addEventListener('click', () => onPng(this));
    this.body = h('div', { class: 'chart-body', 'data-chart': def.id });
    this.note = h('p', { class: 'chart-note', hidden: true });
    this.extra = h('div', { class: 'chart-extra' });
    this.box = h(
      'section',
      { class: 'chart card', 'aria-label': def.title },
      h('header', { class: 'chart-head' }, h('h3', {}, def.title), png),
      this.note,
      this.body,
      this.extra,
    );
  }

  /** New data (columns on one x); null hides the chart behind `note`. */
  update(data: uPlot.AlignedData | null, note?: string): void {
    this.data = data;
    this.note.hidden = !note;
    this.note.textContent = note ?? '';
    this.body.hidden = data === null;
    if (data === null) return;
    if (!this.u) this.create();
    else this.u.setData(data, true);
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
    this.width = Math.max(200, Math.floor(width));
    this.u?.setSize({ width: this.width, height: this.def.height ?? 200 });
  }

  /** Re-applies the shared x range (after a zoom or a reset). */
  refreshScale(): void {
    if (!this.u) return;
    const r = this.ctx.zoom() ?? this.ctx.full();
    if (r) this.u.setScale('x', { min: r.min, max: r.max });
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
    const opts: uPlot.Options = {
      width: this.width,
      height: this.def.height ?? 200,
      ...base,
      scales: {
        ...base.scales,
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
