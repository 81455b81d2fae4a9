// The dashboard: holds what the host sent (snapshots replace, appends extend), draws it once per
// animation frame, and keeps the user's smoothing, zoom and tab across reloads.
// About 500 lines: the one owner of the page's state; the panels, charts and tabs it drives are their own modules.
import type { ConfigDiff, HostMessage, RunData } from '../../src/shared/dashboardProtocol';
import { ChartPanel, readTheme, type ChartContext, type Theme } from './charts';
import { chartDefs } from './chartDefs';
import { fill, h, setText } from './dom';
import { ChartDrawer, type DrawFrame } from './drawCharts';
import { applyAppend, ingestRuns } from './ingest';
import { renderPicker, type PickerRun } from './picker';
import { renderVerdict } from './verdict';
import { renderConfig } from './configPanel';
import { renderConfigDiff } from './configDiff';
import { epochTicks, timeTicks, type XAxisMode } from './xAxis';
import {
  elapsedS,
  renderAmp,
  renderCompareHeader,
  renderFinal,
  renderHeader,
  renderNotices,
  renderPerClass,
} from './panels';
import { formatDuration, safeFileName, toCsv } from './series';
import type { Transport, UiState } from './transport';
import * as l10n from '../shared/l10n';

export class DashboardApp {
  private mode: 'single' | 'compare' = 'single';
  private runs: RunData[] = [];
  /** Compare Runs: the spec fields side by side (the last snapshot's). */
  private configDiff: ConfigDiff | undefined;
  private state: UiState;
  private theme: Theme;
  private panels = new Map<string, ChartPanel>();
  private dirty = false;
  private everSnapshot = false;
  private zoomTimer: number | undefined;
  /** What the charts were built for (mode, runs, devices): series are fixed at build time. */
  private builtFor = '';
  /** The charts were just built and hold nothing yet. */
  private chartsFresh = true;
  private readonly drawer = new ChartDrawer();

  private readonly banner = h('div', { class: 'banner', role: 'alert', hidden: true });
  private readonly picker = h('nav', { class: 'picker', 'aria-label': l10n.t('Runs'), hidden: true });
  private readonly verdict = h('section', { class: 'verdict banner banner-warning', role: 'status', hidden: true });
  private readonly header = h('header', { class: 'run-header card' });
  private readonly final = h('section', { class: 'final card', hidden: true, 'aria-label': l10n.t('Final status') });
  private readonly amp = h('section', { class: 'amp card', 'aria-label': l10n.t('AMP health') });
  private readonly chartsEl = h('div', { class: 'charts' });
  private readonly perClass = h('div', { class: 'per-class-wrap' });
  private readonly notices = h('div', { class: 'notices-wrap' });
  private readonly configEl = h('div', { class: 'config-wrap' });
  private readonly xAxisSelect = h(
    'select',
    { id: 'x-axis', 'aria-label': l10n.t('X axis') },
    h('option', { value: 'step' }, l10n.t('step')),
    h('option', { value: 'epoch' }, l10n.t('epoch')),
    h('option', { value: 'time' }, l10n.t('wall-clock')),
  ) as HTMLSelectElement;
  private readonly xAxisLabel = h('label', { for: 'x-axis' }, l10n.t('X axis'), ' ');
  private readonly noticeTab = h('vscode-tab-header', { 'data-tab': 'notices' }, l10n.t('Warnings & errors'));
  private readonly tabs: HTMLElement;
  private readonly smoothingInput: HTMLInputElement;
  private readonly smoothingOut = h('output', { for: 'smoothing' });
  private readonly zoomFrom = h('input', {
    type: 'number',
    id: 'zoom-from',
    min: 0,
    step: 1,
    'aria-label': l10n.t('Zoom from step'),
    class: 'num',
  });
  private readonly zoomTo = h('input', {
    type: 'number',
    id: 'zoom-to',
    min: 0,
    step: 1,
    'aria-label': l10n.t('Zoom to step'),
    class: 'num',
  });

  constructor(
    mount: HTMLElement,
    private readonly transport: Transport,
  ) {
    const saved = transport.loadState() ?? {};
    const strings = (v: unknown): string[] =>
      Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').slice(0, 200) : [];
    const hiddenSeries: Record<string, string[]> = {};
    if (saved.hiddenSeries && typeof saved.hiddenSeries === 'object')
      for (const [k, v] of Object.entries(saved.hiddenSeries).slice(0, 50)) hiddenSeries[k] = strings(v);
    this.state = {
      smoothing: typeof saved.smoothing === 'number' ? saved.smoothing : 0.6,
      zoom: saved.zoom && Number.isFinite(saved.zoom.min) && Number.isFinite(saved.zoom.max) ? saved.zoom : null,
      tab: typeof saved.tab === 'number' ? saved.tab : 0,
      xAxis: saved.xAxis === 'epoch' || saved.xAxis === 'time' ? saved.xAxis : 'step',
      logCharts: strings(saved.logCharts),
      hiddenSeries,
      hiddenRuns: strings(saved.hiddenRuns),
    };
    this.xAxisSelect.value = this.state.xAxis ?? 'step';
    this.xAxisSelect.addEventListener('change', () => {
      this.state.xAxis = this.xAxisSelect.value as XAxisMode;
      this.save();
      for (const p of this.panels.values()) p.rebuild(); // the axis's splits and labels are fixed at creation
    });
    this.theme = readTheme();

    this.smoothingInput = h('input', {
      type: 'range',
      id: 'smoothing',
      min: 0,
      max: 0.99,
      step: 0.01,
      value: this.state.smoothing,
      'aria-label': l10n.t('Loss smoothing'),
    });
    this.smoothingInput.addEventListener('input', () => {
      this.state.smoothing = Number(this.smoothingInput.value);
      this.save();
      this.schedule();
    });

    const applyZoom = h('vscode-button', { secondary: true }, l10n.t('Zoom'));
    applyZoom.addEventListener('click', () => {
      const min = Number(this.zoomFrom.value);
      const max = Number(this.zoomTo.value);
      if (this.zoomFrom.value !== '' && this.zoomTo.value !== '' && max > min) this.setZoom({ min, max });
    });
    const reset = h(
      'vscode-button',
      { secondary: true, title: l10n.t('Show every step (double-click a chart does the same)') },
      l10n.t('Reset zoom'),
    );
    reset.addEventListener('click', () => this.setZoom(null));
    const csv = h('vscode-button', { title: l10n.t('Export the series shown as CSV') }, l10n.t('Export CSV'));
    csv.addEventListener('click', () => this.exportCsv());

    const toolbar = h(
      'div',
      { class: 'toolbar', role: 'toolbar', 'aria-label': l10n.t('Chart controls') },
      h('label', { for: 'smoothing' }, l10n.t('Smoothing'), ' '),
      this.smoothingInput,
      this.smoothingOut,
      h('span', { class: 'sep' }),
      h('label', { for: 'zoom-from' }, l10n.t('Steps'), ' '),
      this.zoomFrom,
      h('label', { for: 'zoom-to' }, ' ', l10n.t('to'), ' '),
      this.zoomTo,
      applyZoom,
      reset,
      h('span', { class: 'sep' }),
      this.xAxisLabel,
      this.xAxisSelect,
      h('span', { class: 'sep' }),
      csv,
    );

    this.tabs = h(
      'vscode-tabs',
      { 'selected-index': this.state.tab },
      h('vscode-tab-header', { 'data-tab': 'training' }, l10n.t('Training')),
      h('vscode-tab-panel', {}, toolbar, this.amp, this.chartsEl),
      h('vscode-tab-header', { 'data-tab': 'classes' }, l10n.t('Per-class accuracy')),
      h('vscode-tab-panel', {}, this.perClass),
      this.noticeTab,
      h('vscode-tab-panel', {}, this.notices),
      h('vscode-tab-header', { 'data-tab': 'config' }, l10n.t('Config')),
      h('vscode-tab-panel', {}, this.configEl),
    );
    this.tabs.addEventListener('vsc-tabs-select', (ev) => {
      this.state.tab = (ev as CustomEvent<{ selectedIndex: number }>).detail.selectedIndex;
      this.save();
      // Charts in a hidden panel have no width: size them once their tab shows.
      requestAnimationFrame(() => this.resizeCharts());
    });

    fill(mount, this.banner, this.picker, this.verdict, this.header, this.final, this.tabs);
    fill(this.header, h('p', { class: 'empty' }, l10n.t('Connecting to the run…')));

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
          ? l10n.t('The dashboard server closed the connection: {0}; retrying…', reason)
          : l10n.t('Connection to the dashboard server lost; reconnecting…'),
      ),
    );
    transport.post({ type: 'ready', width: this.plotWidth() });
    if (this.state.zoom)
      transport.post({ type: 'zoom', min: this.state.zoom.min, max: this.state.zoom.max, width: this.plotWidth() });
    this.exposeForTests();
  }

  /** The browser's runs root: a picker for one run or a comparison. */
  showPicker(runs: PickerRun[], current: URLSearchParams): void {
    renderPicker(this.picker, runs, current, (params) => this.navigate(params));
  }

  private navigate(params: Record<string, string>): void {
    const q = new URLSearchParams({ token: new URLSearchParams(location.search).get('token') ?? '', ...params });
    location.search = q.toString();
  }

  private receive(m: HostMessage): void {
    switch (m.type) {
      case 'snapshot':
        this.mode = m.mode;
        this.runs = ingestRuns(m.runs);
        this.configDiff = m.configDiff;
        this.everSnapshot = true;
        if (m.range.min !== null && m.range.max !== null) this.state.zoom = { min: m.range.min, max: m.range.max };
        // The charts are rebuilt only when the runs or devices differ (render checks); else new data.
        break;
      case 'append': {
        const run = this.runs.find((r) => r.header.key === m.key);
        if (!run) return;
        applyAppend(run, m);
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
      xTicks: () => this.xTicks(),
      isLog: (id) => (this.state.logCharts ?? []).includes(id),
      setLog: (id, on) => {
        const rest = (this.state.logCharts ?? []).filter((c) => c !== id);
        this.state.logCharts = on ? [...rest, id] : rest;
        this.save();
      },
      hiddenSeries: (id) => new Set(this.state.hiddenSeries?.[id] ?? []),
      setSeriesShown: (id, label, shown) => {
        const all = (this.state.hiddenSeries ??= {});
        const rest = (all[id] ?? []).filter((l) => l !== label);
        all[id] = shown ? rest : [...rest, label];
        this.save();
      },
    };
  }

  /** The x axis's labels in the chosen unit (single run; Compare Runs keeps steps). */
  private xTicks() {
    const run = this.runs[0];
    if (this.mode !== 'single' || !run) return null;
    if (this.state.xAxis === 'epoch' && run.header.stepsPerEpoch) return epochTicks(run.header.stepsPerEpoch);
    if (this.state.xAxis === 'time') return timeTicks(run.steps, run.header.startedAt);
    return null;
  }

  /** Compare Runs: a run shown or hidden in every chart. */
  private setRunShown(key: string, shown: boolean): void {
    const rest = (this.state.hiddenRuns ?? []).filter((k) => k !== key);
    this.state.hiddenRuns = shown ? rest : [...rest, key];
    this.save();
    this.applyHiddenRuns();
  }

  private applyHiddenRuns(): void {
    const hidden = new Set(this.state.hiddenRuns ?? []);
    this.runs.forEach((r, i) => {
      for (const p of this.panels.values()) p.setRunShown(i, !hidden.has(r.header.key));
    });
  }

  // ---- charts -----------------------------------------------------------------------------------

  private structure(): string {
    const run = this.runs[0];
    const devices = this.mode === 'single' && run ? Object.keys(run.devices.devices).sort().join(',') : '';
    const host = this.mode === 'single' && run?.host?.steps.length ? 'host' : '';
    // Compare Runs' series labels carry each run's differing settings
    const labels = this.mode === 'compare' ? this.runs.map((r) => JSON.stringify(r.differs ?? [])).join('|') : '';
    return `${this.mode}|${this.runs.map((r) => r.header.key).join(',')}|${devices}|${host}|${labels}`;
  }

  /** The structure changed (a snapshot: other runs; an append: a device's first sample): new charts. */
  private rebuildPanels(): void {
    this.builtFor = this.structure();
    this.chartsFresh = true;
    for (const p of this.panels.values()) p.destroy();
    this.panels.clear();
    const ctx = this.chartContext();
    for (const def of chartDefs(this.theme, this.mode, this.runs))
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
    setText(this.noticeTab, count ? l10n.t('Warnings & errors ({0})', count) : l10n.t('Warnings & errors'));
    if (runs.length === 0) {
      fill(
        this.header,
        h(
          'p',
          { class: 'empty' },
          this.everSnapshot ? l10n.t('No run to show yet.') : l10n.t('Connecting to the run…'),
        ),
      );
      return;
    }
    const now = Date.now() / 1000;
    if (this.structure() !== this.builtFor) this.rebuildPanels();
    if (this.mode === 'single') renderConfig(this.configEl, runs[0].config);
    else renderConfigDiff(this.configEl, this.configDiff, runs);
    if (this.mode === 'compare') {
      renderCompareHeader(this.header, runs, this.theme.palette, new Set(this.state.hiddenRuns ?? []), (key, shown) =>
        this.setRunShown(key, shown),
      );
      renderVerdict(this.verdict, undefined);
      this.amp.hidden = true;
      this.final.hidden = true;
      const drawn = `compare:${runs.map((r) => `${r.header.key}=${r.evals.steps.length}`).join(',')}`;
      if (this.perClass.dataset.drawn !== drawn) {
        fill(this.perClass, ...runs.map((r) => h('section', {}, h('h3', {}, r.header.name), this.perClassTable(r))));
        this.perClass.dataset.drawn = drawn;
      }
      this.drawer.compare(runs, this.frame());
      this.applyHiddenRuns();
    } else {
      const run = runs[0];
      renderVerdict(this.verdict, run.header);
      renderHeader(this.header, run.header, now);
      renderFinal(this.final, run.header);
      this.amp.hidden = false;
      renderAmp(this.amp, run.amp, run.header.lossScaleMode);
      renderPerClass(this.perClass, run.header.classes, run.evals);
      this.drawer.single(run, this.frame());
    }
    this.chartsFresh = false;
  }

  private frame(): DrawFrame {
    return {
      panels: this.panels,
      fresh: this.chartsFresh,
      smoothing: this.state.smoothing,
      range: this.state.zoom ?? this.fullRange(),
    };
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
      scales: (id: string) => this.panels.get(id)?.scales() ?? null,
      shown: (id: string) => this.panels.get(id)?.shown() ?? null,
      xLabels: (id: string) => this.panels.get(id)?.xLabels() ?? null,
      notes: () => Object.fromEntries([...this.panels].map(([id, p]) => [id, p.noteText()])),
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
