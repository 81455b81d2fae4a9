// The dashboard: holds what the host sent (snapshots replace, appends extend), draws it once per
// animation frame, and keeps the user's smoothing, zoom and tab across reloads.
import type uPlot from 'uplot';
import type { DeviceBlock, EvalBlock, HostMessage, RunData, StepBlock } from '../../src/shared/dashboardProtocol';
import {
  axis,
  ChartPanel,
  line,
  markers,
  readTheme,
  stepAxis,
  type ChartContext,
  type ChartDef,
  type Theme,
} from './charts';
import { fill, h, setText } from './dom';
import { SingleRunColumns } from './live';
import {
  elapsedS,
  renderAmp,
  renderCompareHeader,
  renderFinal,
  renderHeader,
  renderNotices,
  renderPerClass,
} from './panels';
import { formatDuration, joinOnX, overflowMarkers, safeFileName, smooth, toCsv } from './series';
import type { Transport, UiState } from './transport';

type Cols = (number | null)[];

function pushAll<T>(into: T[], from: readonly T[] | undefined): void {
  if (from) for (const v of from) into.push(v);
}

function appendSteps(a: StepBlock, b: StepBlock): void {
  for (const k of Object.keys(a) as (keyof StepBlock)[]) pushAll(a[k] as unknown[], b[k] as unknown[]);
}

function appendEvals(a: EvalBlock, b: EvalBlock): void {
  for (const k of Object.keys(a) as (keyof EvalBlock)[]) pushAll(a[k] as unknown[], b[k] as unknown[]);
}

function appendDevices(a: DeviceBlock, b: DeviceBlock): void {
  const before = a.steps.length;
  pushAll(a.steps, b.steps);
  pushAll(a.t, b.t);
  const ids = new Set([...Object.keys(a.devices), ...Object.keys(b.devices)]);
  for (const id of ids) {
    // A device that appears (or drops out) later gets nulls for the rows it missed.
    const cur = (a.devices[id] ??= { util: [], hbmUsedMb: [], hbmTotalMb: [], tempC: [], powerW: [] });
    const add = b.devices[id];
    for (const k of Object.keys(cur) as (keyof typeof cur)[]) {
      while (cur[k].length < before) cur[k].push(null);
      if (add) pushAll(cur[k], add[k]);
      while (cur[k].length < a.steps.length) cur[k].push(null);
    }
  }
}

const LOSS_SCALE_WINDOW_FALLBACK = 100;

export class DashboardApp {
  private mode: 'single' | 'compare' = 'single';
  private runs: RunData[] = [];
  private state: UiState;
  private theme: Theme;
  private panels = new Map<string, ChartPanel>();
  private dirty = false;
  private everSnapshot = false;
  private zoomTimer: number | undefined;
  /** What the charts were built for (mode, runs, devices): series are fixed at build time. */
  private builtFor = '';
  /** The single-run charts' derived columns, extended in place on appends. */
  private readonly live = new SingleRunColumns();
  /** What the charts hold now, so that a render redraws only those whose data changed. */
  private chartsFresh = true;
  private drawnDevices: { block: DeviceBlock; rows: number } | undefined;
  private drawnCompare = '';
  private compareRuns: RunData[] | undefined;
  private drawnRange = '';

  private readonly banner = h('div', { class: 'banner', role: 'alert', hidden: true });
  private readonly picker = h('nav', { class: 'picker', 'aria-label': 'Runs', hidden: true });
  private readonly header = h('header', { class: 'run-header card' });
  private readonly final = h('section', { class: 'final card', hidden: true, 'aria-label': 'Final status' });
  private readonly amp = h('section', { class: 'amp card', 'aria-label': 'AMP health' });
  private readonly chartsEl = h('div', { class: 'charts' });
  private readonly perClass = h('div', { class: 'per-class-wrap' });
  private readonly notices = h('div', { class: 'notices-wrap' });
  private readonly noticeTab = h('vscode-tab-header', { 'data-tab': 'notices' }, 'Warnings & errors');
  private readonly tabs: HTMLElement;
  private readonly smoothingInput: HTMLInputElement;
  private readonly smoothingOut = h('output', { for: 'smoothing' });
  private readonly zoomFrom = h('input', {
    type: 'number',
    id: 'zoom-from',
    min: 0,
    step: 1,
    'aria-label': 'Zoom from step',
    class: 'num',
  });
  private readonly zoomTo = h('input', {
    type: 'number',
    id: 'zoom-to',
    min: 0,
    step: 1,
    'aria-label': 'Zoom to step',
    class: 'num',
  });

  constructor(
    mount: HTMLElement,
    private readonly transport: Transport,
  ) {
    const saved = transport.loadState() ?? {};
    this.state = {
      smoothing: typeof saved.smoothing === 'number' ? saved.smoothing : 0.6,
      zoom: saved.zoom && Number.isFinite(saved.zoom.min) && Number.isFinite(saved.zoom.max) ? saved.zoom : null,
      tab: typeof saved.tab === 'number' ? saved.tab : 0,
    };
    this.theme = readTheme();

    this.smoothingInput = h('input', {
      type: 'range',
      id: 'smoothing',
      min: 0,
      max: 0.99,
      step: 0.01,
      value: this.state.smoothing,
      'aria-label': 'Loss smoothing',
    });
    this.smoothingInput.addEventListener('input', () => {
      this.state.smoothing = Number(this.smoothingInput.value);
      this.save();
      this.schedule();
    });

    const applyZoom = h('vscode-button', { secondary: true }, 'Zoom');
    applyZoom.addEventListener('click', () => {
      const min = Number(this.zoomFrom.value);
      const max = Number(this.zoomTo.value);
      if (this.zoomFrom.value !== '' && this.zoomTo.value !== '' && max > min) this.setZoom({ min, max });
    });
    const reset = h(
      'vscode-button',
      { secondary: true, title: 'Show every step (double-click a chart does the same)' },
      'Reset zoom',
    );
    reset.addEventListener('click', () => this.setZoom(null));
    const csv = h('vscode-button', { title: 'Export the series shown as CSV' }, 'Export CSV');
    csv.addEventListener('click', () => this.exportCsv());

    const toolbar = h(
      'div',
      { class: 'toolbar', role: 'toolbar', 'aria-label': 'Chart controls' },
      h('label', { for: 'smoothing' }, 'Smoothing '),
      this.smoothingInput,
      this.smoothingOut,
      h('span', { class: 'sep' }),
      h('label', { for: 'zoom-from' }, 'Steps '),
      this.zoomFrom,
      h('label', { for: 'zoom-to' }, ' to '),
      this.zoomTo,
      applyZoom,
      reset,
      h('span', { class: 'sep' }),
      csv,
    );

    this.tabs = h(
      'vscode-tabs',
      { 'selected-index': this.state.tab },
      h('vscode-tab-header', { 'data-tab': 'training' }, 'Training'),
      h('vscode-tab-panel', {}, toolbar, this.amp, this.chartsEl),
      h('vscode-tab-header', { 'data-tab': 'classes' }, 'Per-class accuracy'),
      h('vscode-tab-panel', {}, this.perClass),
      this.noticeTab,
      h('vscode-tab-panel', {}, this.notices),
    );
    this.tabs.addEventListener('vsc-tabs-select', (ev) => {
      this.state.tab = (ev as CustomEvent<{ selectedIndex: number }>).detail.selectedIndex;
      this.save();
      // Charts in a hidden panel have no width: size them once their tab shows.
      requestAnimationFrame(() => this.resizeCharts());
    });

    fill(mount, this.banner, this.picker, this.header, this.final, this.tabs);
    fill(this.header, h('p', { class: 'empty' }, 'Connecting to the run…'));

    new ResizeObserver(() => this.resizeCharts()).observe(this.chartsEl);
    // Theme changes: VS Code swaps body classes; a browser follows the OS setting.
    new MutationObserver(() => this.retheme()).observe(document.body, { attributes: true, attributeFilter: ['class'] });
    window.matchMedia?.('(prefers-color-scheme: dark)').addEventListener?.('change', () => this.retheme());
    setInterval(() => this.tickElapsed(), 1000);

    transport.onMessage((m) => this.receive(m));
    transport.onConnection((s, reason) =>
      this.showBanner(
        s === 'closed' ? 'warning' : null,
        reason
          ? `The dashboard server closed the connection: ${reason}; retrying…`
          : 'Connection to the dashboard server lost; reconnecting…',
      ),
    );
    transport.post({ type: 'ready', width: this.plotWidth() });
    if (this.state.zoom)
      transport.post({ type: 'zoom', min: this.state.zoom.min, max: this.state.zoom.max, width: this.plotWidth() });
    this.exposeForTests();
  }

  /** The browser's runs root: a picker for one run or a comparison. */
  showPicker(
    runs: { key: string; name: string; runId: string; state: string | null; problem?: string | null }[],
    current: URLSearchParams,
  ): void {
    if (runs.length === 0) return;
    this.picker.hidden = false;
    const select = h('select', { id: 'run-picker', 'aria-label': 'Run' });
    const selected = current.get('run');
    for (const r of runs) {
      // A run whose files are bad is still listed, marked, with its problem as the tooltip.
      const bad = typeof r.problem === 'string' && r.problem !== '';
      const label = `${bad ? '⚠ ' : ''}${r.name} · ${r.runId}${r.state ? ` · ${r.state}` : ''}${bad ? ' · bad run' : ''}`;
      const o = h('option', { value: r.key, title: bad ? String(r.problem) : undefined }, label);
      if (r.key === selected) o.selected = true;
      select.appendChild(o);
    }
    const open = h('vscode-button', {}, 'Open');
    open.addEventListener('click', () => this.navigate({ run: select.value }));
    const compareBoxes = runs.map((r) => h('vscode-checkbox', { value: r.key, label: `${r.name} (${r.runId})` }));
    const compare = h('vscode-button', { secondary: true }, 'Compare selected');
    compare.addEventListener('click', () => {
      const keys = compareBoxes
        .filter((b) => (b as unknown as { checked: boolean }).checked)
        .map((b) => b.getAttribute('value')!);
      if (keys.length >= 2) this.navigate({ compare: keys.join(',') });
    });
    fill(
      this.picker,
      h('label', { for: 'run-picker' }, 'Run '),
      select,
      open,
      runs.length > 1
        ? h('details', { class: 'compare-pick' }, h('summary', {}, 'Compare runs…'), ...compareBoxes, compare)
        : null,
    );
  }

  private navigate(params: Record<string, string>): void {
    const q = new URLSearchParams({ token: new URLSearchParams(location.search).get('token') ?? '', ...params });
    location.search = q.toString();
  }

  private receive(m: HostMessage): void {
    switch (m.type) {
      case 'snapshot':
        this.mode = m.mode;
        this.runs = m.runs;
        this.everSnapshot = true;
        if (m.range.min !== null && m.range.max !== null) this.state.zoom = { min: m.range.min, max: m.range.max };
        // The charts are rebuilt only when the runs or devices differ (render checks); else new data.
        break;
      case 'append': {
        const run = this.runs.find((r) => r.header.key === m.key);
        if (!run) return;
        run.header = m.header;
        run.amp = m.amp;
        if (m.steps) {
          appendSteps(run.steps, m.steps);
          run.totalStepRows += m.steps.steps.length;
        }
        if (m.evals) appendEvals(run.evals, m.evals);
        if (m.devices) appendDevices(run.devices, m.devices);
        pushAll(run.notices, m.notices);
        break;
      }
      case 'status':
        this.showBanner(m.level, m.message);
        return;
    }
    this.schedule();
  }

  private showBanner(level: 'info' | 'warning' | 'error' | null, message: string): void {
    this.banner.hidden = level === null;
    this.banner.className = `banner banner-${level ?? 'info'}`;
    this.banner.textContent = level === null ? '' : message;
  }

  private schedule(): void {
    if (this.dirty) return;
    this.dirty = true;
    requestAnimationFrame(() => {
      this.dirty = false;
      this.render();
    });
  }

  private save(): void {
    this.transport.saveState(this.state);
  }

  private plotWidth(): number {
    const w = this.chartsEl.clientWidth || document.body.clientWidth || 800;
    return Math.max(100, Math.min(10000, Math.round(w - 80)));
  }

  // ---- zoom -------------------------------------------------------------------------------------

  private fullRange(): { min: number; max: number } | null {
    let min = Infinity;
    let max = -Infinity;
    for (const r of this.runs) {
      for (const xs of [r.steps.steps, r.evals.steps, r.devices.steps]) {
        if (xs.length === 0) continue;
        min = Math.min(min, xs[0]);
        max = Math.max(max, xs[xs.length - 1]);
      }
    }
    return Number.isFinite(min) ? { min, max } : null;
  }

  private setZoom(z: { min: number; max: number } | null): void {
    this.state.zoom = z;
    this.save();
    this.zoomFrom.value = z ? String(z.min) : '';
    this.zoomTo.value = z ? String(z.max) : '';
    for (const p of this.panels.values()) p.refreshScale();
    // The host refines the rows for the new range; ask once the user stops dragging.
    clearTimeout(this.zoomTimer);
    this.zoomTimer = window.setTimeout(
      () => this.transport.post({ type: 'zoom', min: z?.min ?? null, max: z?.max ?? null, width: this.plotWidth() }),
      150,
    );
  }

  private chartContext(): ChartContext {
    return {
      syncKey: 'ascend-steps',
      zoom: () => this.state.zoom,
      full: () => this.fullRange(),
      onZoom: (min, max) => max > min && this.setZoom({ min, max }),
      onReset: () => this.setZoom(null),
    };
  }

  // ---- charts -----------------------------------------------------------------------------------

  private chartDefs(): ChartDef[] {
    const t = this.theme;
    const c = t.palette;
    const runNames = this.runs.map((r) => r.header.name);
    const log2Axis = (extra: Partial<uPlot.Axis> = {}) =>
      axis(t, {
        scale: 'ls',
        size: 60,
        values: (_u: uPlot, splits: number[]) => splits.map((v) => (v > 0 ? `2^${Math.round(Math.log2(v))}` : '')),
        ...extra,
      });
    if (this.mode === 'compare') {
      return [
        {
          id: 'loss',
          title: 'Training loss (smoothed)',
          options: () => ({
            series: [{ label: 'step' }, ...runNames.map((n, i) => line(n, c[i % c.length]))],
            axes: [stepAxis(t), axis(t, { size: 60 })],
          }),
        },
        {
          id: 'accuracy',
          title: 'Validation accuracy (%)',
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
    const run = this.runs[0];
    const deviceIds = run ? Object.keys(run.devices.devices).sort((a, b) => Number(a) - Number(b)) : [];
    return [
      {
        id: 'loss',
        title: 'Training loss',
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
        title: 'Validation accuracy (%)',
        options: () => ({
          series: [{ label: 'step' }, line('val acc %', c[2], { points: { show: true, size: 6 } })],
          scales: { y: { range: [0, 100] } },
          axes: [stepAxis(t), axis(t, { size: 60 })],
        }),
      },
      {
        id: 'lr',
        title: 'Learning rate',
        height: 150,
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

  private structure(): string {
    const devices =
      this.mode === 'single' && this.runs[0] ? Object.keys(this.runs[0].devices.devices).sort().join(',') : '';
    return `${this.mode}|${this.runs.map((r) => r.header.key).join(',')}|${devices}`;
  }

  /** The structure changed (a snapshot: other runs; an append: a device's first sample): new charts. */
  private rebuildPanels(): void {
    this.builtFor = this.structure();
    this.chartsFresh = true;
    for (const p of this.panels.values()) p.destroy();
    this.panels.clear();
    const ctx = this.chartContext();
    for (const def of this.chartDefs())
      this.panels.set(def.id, new ChartPanel(def, ctx, this.theme, (p) => this.exportPng(p)));
    fill(this.chartsEl, ...[...this.panels.values()].map((p) => p.box));
    this.panels.get(this.mode === 'compare' ? 'loss' : 'accuracy')?.extra.replaceChildren();
    const width = this.chartsEl.clientWidth;
    if (width) for (const p of this.panels.values()) p.resize(width - 24);
  }

  private retheme(): void {
    this.theme = readTheme();
    if (this.everSnapshot) this.rebuildPanels();
    this.schedule();
  }

  private resizeCharts(): void {
    const width = this.chartsEl.clientWidth;
    if (!width) return;
    for (const p of this.panels.values()) p.resize(width - 24);
  }

  private render(): void {
    const start = performance.now();
    try {
      this.renderNow();
    } finally {
      // Visible in the browser's performance timeline (and read by the benchmark).
      performance.measure('ascend-dashboard-render', { start });
    }
  }

  private renderNow(): void {
    const runs = this.runs;
    setText(this.smoothingOut, this.state.smoothing.toFixed(2));
    if (this.state.zoom) {
      if (this.zoomFrom.value !== String(this.state.zoom.min)) this.zoomFrom.value = String(this.state.zoom.min);
      if (this.zoomTo.value !== String(this.state.zoom.max)) this.zoomTo.value = String(this.state.zoom.max);
    }
    const count = renderNotices(this.notices, runs);
    setText(this.noticeTab, count ? `Warnings & errors (${count})` : 'Warnings & errors');
    if (runs.length === 0) {
      fill(
        this.header,
        h('p', { class: 'empty' }, this.everSnapshot ? 'No run to show yet.' : 'Connecting to the run…'),
      );
      return;
    }
    const now = Date.now() / 1000;
    if (this.structure() !== this.builtFor) this.rebuildPanels();
    if (this.mode === 'compare') {
      renderCompareHeader(this.header, runs, this.theme.palette);
      this.amp.hidden = true;
      this.final.hidden = true;
      const drawn = `compare:${runs.map((r) => `${r.header.key}=${r.evals.steps.length}`).join(',')}`;
      if (this.perClass.dataset.drawn !== drawn) {
        fill(this.perClass, ...runs.map((r) => h('section', {}, h('h3', {}, r.header.name), this.perClassTable(r))));
        this.perClass.dataset.drawn = drawn;
      }
      this.renderCompareCharts();
    } else {
      const run = runs[0];
      renderHeader(this.header, run.header, now);
      renderFinal(this.final, run.header);
      this.amp.hidden = false;
      renderAmp(this.amp, run.amp, run.header.lossScaleMode);
      renderPerClass(this.perClass, run.header.classes, run.evals);
      this.renderSingleCharts(run);
    }
    this.chartsFresh = false;
  }

  /** The x range every chart shows changed (the run grew, or a zoom): charts not redrawn for new data follow it. */
  private rangeMoved(): boolean {
    const r = this.state.zoom ?? this.fullRange();
    const key = r ? `${r.min}:${r.max}` : '';
    if (key === this.drawnRange) return false;
    this.drawnRange = key;
    return true;
  }

  private perClassTable(run: RunData): HTMLElement {
    const el = h('div');
    renderPerClass(el, run.header.classes, run.evals, 3);
    return el;
  }

  private tickElapsed(): void {
    if (this.mode !== 'single' || !this.runs[0]) return;
    const el = this.header.querySelector('[data-field="elapsed"] .field-value');
    if (el) el.textContent = formatDuration(elapsedS(this.runs[0].header, Date.now() / 1000));
  }

  private renderSingleCharts(run: RunData): void {
    const s = run.steps;
    const e = run.evals;
    const p = (id: string) => this.panels.get(id)!;
    const fresh = this.chartsFresh;
    const waiting = s.steps.length === 0 ? 'Waiting for the first step…' : undefined;
    const hasSteps = s.steps.length > 0;
    const window = run.amp.window || LOSS_SCALE_WINDOW_FALLBACK;
    const changed = this.live.update(s, e, this.state.smoothing, window);
    const stepsNew = fresh || changed.steps;
    const evalsNew = fresh || changed.evals;
    const d = run.devices;
    const devicesNew = fresh || this.drawnDevices?.block !== d || this.drawnDevices.rows !== d.steps.length;
    this.drawnDevices = { block: d, rows: d.steps.length };
    const moved = this.rangeMoved();
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
    if (follow('accuracy', evalsNew)) {
      p('accuracy').update(
        e.steps.length ? ([e.steps, live.accPercent] as uPlot.AlignedData) : null,
        e.steps.length
          ? undefined
          : 'Validation accuracy appears after the first epoch (none when the run has no validation set).',
      );
    }
    renderPerClass(p('accuracy').extra, run.header.classes, e, 3);
    if (follow('lr', stepsNew)) give('lr', hasSteps ? ([s.steps, s.lr] as uPlot.AlignedData) : null, waiting);

    if (follow('lossScale', stepsNew)) {
      const scaled = s.lossScale.some((v) => v !== null);
      give(
        'lossScale',
        scaled ? ([s.steps, s.lossScale, live.markers, live.overflowCounts] as uPlot.AlignedData) : null,
        !hasSteps
          ? waiting
          : scaled
            ? undefined
            : 'This run has no loss scaling (amp.loss_scale none), so there is no scale to chart.',
      );
    }
    if (follow('throughput', stepsNew))
      give('throughput', hasSteps ? ([s.steps, s.imgPerS, s.stepMs, s.dataMs] as uPlot.AlignedData) : null, waiting);

    const npuNew = follow('npu', devicesNew);
    if (!follow('hbm', devicesNew) || !npuNew) return;
    const ids = Object.keys(d.devices).sort((a, b) => Number(a) - Number(b));
    const noDevices =
      'No NPU telemetry in this run (the runner reports it from device events on Ascend; a CPU run has none).';
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

  private renderCompareCharts(): void {
    const runs = this.runs;
    const p = (id: string) => this.panels.get(id)!;
    // Snapshots replace every run (chartsFresh via a rebuild, or new arrays: a new key below).
    const drawn = `${this.state.smoothing}|${runs.map((r) => `${r.steps.steps.length}/${r.evals.steps.length}/${r.steps.steps.at(-1)}`).join(',')}`;
    const moved = this.rangeMoved();
    if (!this.chartsFresh && drawn === this.drawnCompare && this.compareRuns === runs) {
      if (moved) for (const panel of this.panels.values()) panel.refreshScale();
      return;
    }
    this.drawnCompare = drawn;
    this.compareRuns = runs;
    const any = runs.some((r) => r.steps.steps.length > 0);
    p('loss').update(
      any
        ? (joinOnX(
            runs.map((r) => ({ x: r.steps.steps, ys: [smooth(r.steps.loss, this.state.smoothing)] })),
          ) as uPlot.AlignedData)
        : null,
      any ? undefined : 'Waiting for the first step…',
    );
    const evals = runs.some((r) => r.evals.steps.length > 0);
    p('accuracy').update(
      evals
        ? (joinOnX(
            runs.map((r) => ({ x: r.evals.steps, ys: [r.evals.valAcc.map((v) => (v === null ? null : v * 100))] })),
          ) as uPlot.AlignedData)
        : null,
      evals ? undefined : 'No evaluation yet.',
    );
    const scaled = runs.some((r) => r.steps.lossScale.some((v) => v !== null));
    const joined = joinOnX(runs.map((r) => ({ x: r.steps.steps, ys: [r.steps.lossScale as Cols] })));
    const marks = joinOnX(runs.map((r) => ({ x: r.steps.steps, ys: [overflowMarkers(r.steps)] })));
    // Both joins share one x (the union of the same step columns).
    p('lossScale').update(
      scaled ? ([joined[0], ...joined.slice(1), ...marks.slice(1)] as uPlot.AlignedData) : null,
      scaled ? undefined : 'No run here uses loss scaling.',
    );
  }

  // ---- export -----------------------------------------------------------------------------------

  private baseName(): string {
    return this.mode === 'compare' ? 'compare' : (this.runs[0]?.header.name ?? 'run');
  }

  private exportCsv(): void {
    if (this.runs.length === 0) return;
    this.saveFile('csv', safeFileName(this.baseName(), 'csv'), toCsv(this.runs), 'text/csv');
  }

  private exportPng(panel: ChartPanel): void {
    const url = panel.png();
    if (url) this.saveFile('png', safeFileName(`${this.baseName()}-${panel.def.id}`, 'png'), url, 'image/png');
  }

  /** VS Code: the host asks where to save. Browser: a download of a blob. */
  private saveFile(format: 'csv' | 'png', name: string, data: string, mime: string): void {
    if (this.transport.kind === 'vscode') {
      this.transport.post({ type: 'export', format, suggestedName: name, data });
      return;
    }
    const blob = format === 'png' ? dataUrlToBlob(data) : new Blob([data], { type: mime });
    const a = h('a', { download: name, href: URL.createObjectURL(blob) });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  }

  /** A read-only look at what the charts draw, for the browser tests and the benchmark. */
  private exposeForTests(): void {
    (window as unknown as { __ascendDashboard: unknown }).__ascendDashboard = {
      chartData: (id: string) => {
        const d = this.panels.get(id)?.current();
        return d ? d.map((col) => Array.from(col as ArrayLike<number | null>)) : null;
      },
      charts: () => [...this.panels.keys()],
      xRange: (id: string) => this.panels.get(id)?.xRange() ?? null,
      mode: () => this.mode,
      runs: () => this.runs.map((r) => ({ key: r.header.key, name: r.header.name, stepRows: r.steps.steps.length })),
      state: () => ({ ...this.state }),
    };
  }
}

function dataUrlToBlob(url: string): Blob {
  const [head, b64] = url.split(',', 2);
  const mime = /data:([^;]+)/.exec(head)?.[1] ?? 'application/octet-stream';
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new Blob([bytes], { type: mime });
}
