// The checkpoint explorer: one webview panel per run (webview/checkpoints). The host keeps the
// whole state (rows, the selected checkpoint's tensors, the last evaluation and comparison) and
// sends it as one snapshot after each change and whenever the panel becomes visible again (a hidden
// webview drops messages). Messages from the webview are validated against the files this run
// lists (src/shared/checkpointsProtocol.ts) before anything runs.
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  groupOf,
  type CompareResult,
  type EvalResult,
  type ExportFormat,
  type InspectResult,
  type Thumb,
} from '../../core/checkpoints/client';
import type { CheckpointDetail } from '../../core/checkpoints/runInfo';
import { webviewPage } from '../../core/webviewPage';
import {
  validateUiMessage,
  type CheckpointRow,
  type CompareView,
  type EvalView,
  type ExplorerState,
  type GalleryWhat,
  type HostMessage,
  type RowAction,
  type TensorsView,
} from '../../shared/checkpointsProtocol';
import { errorText } from '../context';
import { runKey, type RunRef } from '../runMonitor';
import { bundleAssets, pageL10n, webviewOptions } from '../webviewAssets';
import { cannotCompare, galleryView, mistakeCount, predictionsCompareView } from './gallery';
import type { CheckpointSource, CkptRef } from './types';
import { runWeights } from './view';

/** What the explorer needs from the extension: the view's data and the actions (commands.ts builds it). */
export interface ExplorerHost {
  view: CheckpointSource;
  targetLabel(targetId: string): string;
  /** The run's display name (meta name, spec name or id, told apart from its namesakes). */
  displayName?(ref: RunRef): string;
  isSsh(targetId: string): boolean;
  isLive(ref: RunRef): boolean;
  inspect(ref: CkptRef): Promise<InspectResult>;
  evaluate(ref: CkptRef, data?: 'val' | 'pick'): Promise<EvalResult | undefined>;
  /** Thumbnails of files inside `root` (an evaluation's data folder), read on the run's target. */
  thumbs(ref: CkptRef, root: string, files: string[]): Promise<Thumb[]>;
  exportTo(ref: CkptRef, format: ExportFormat): Promise<void>;
  compare(a: CkptRef, b?: CkptRef): Promise<{ a: CkptRef; b: CkptRef; result: CompareResult } | undefined>;
  action(action: RowAction, ref: CkptRef): Promise<void>;
  prune(run: RunRef, keepNewest: number): Promise<void>;
  log(message: string): void;
  extensionUri: vscode.Uri;
}

const VIEW_TYPE = 'ascend.checkpointExplorer';

export class CheckpointExplorer {
  private static readonly open = new Map<string, CheckpointExplorer>();
  private state: ExplorerState;
  private files = new Set<string>();
  /** The checkpoints of this run that the shown comparison is of: it goes when one of them is deleted. */
  private compared: string[] = [];
  /** Evaluations run from this panel, by checkpoint file (newer than what the view read). */
  private readonly evals = new Map<string, EvalResult>();
  private readonly subs: vscode.Disposable[] = [];

  /** Reveals the run's explorer, creating it if needed. */
  static show(host: ExplorerHost, run: RunRef): CheckpointExplorer {
    const key = runKey(run);
    const existing = CheckpointExplorer.open.get(key);
    if (existing) {
      existing.panel.reveal();
      return existing;
    }
    const ex = new CheckpointExplorer(host, run);
    CheckpointExplorer.open.set(key, ex);
    return ex;
  }

  private readonly panel: vscode.WebviewPanel;

  private constructor(
    private readonly host: ExplorerHost,
    private readonly run: RunRef,
  ) {
    const record = host.view.record(run);
    const name = host.displayName?.(run) ?? record?.name ?? run.runId;
    this.panel = vscode.window.createWebviewPanel(
      VIEW_TYPE,
      vscode.l10n.t('Checkpoints: {0}', name),
      vscode.ViewColumn.Active,
      webviewOptions(host.extensionUri),
    );
    this.state = {
      run: {
        name,
        ...this.userMeta(),
        runId: run.runId,
        target: host.targetLabel(run.targetId),
        backbone: null,
        pretrained: null,
        weightsSha256: null,
        weightsFirst: null,
        preprocess: null,
        freeze: null,
        classes: [],
        live: host.isLive(run),
        ssh: host.isSsh(run.targetId),
      },
      rows: [],
      problems: [],
      selected: null,
      tensors: null,
      evaluation: null,
      comparison: null,
      gallery: null,
      predictionsComparison: null,
      busy: vscode.l10n.t('Reading checkpoints…'),
      error: null,
    };
    this.panel.webview.html = explorerHtml(this.panel.webview, host.extensionUri);
    this.subs.push(
      this.panel.webview.onDidReceiveMessage((m) => void this.onMessage(m)),
      this.panel.onDidChangeViewState(() => this.panel.visible && this.post()),
      host.view.onDidChangeTreeData(() => void this.reload()),
      this.panel.onDidDispose(() => this.dispose()),
    );
    void this.reload();
  }

  /** The run's notes and tags (meta.json through the Runs view's record). */
  private userMeta(): { notes: string; tags: string[] } {
    const meta = this.host.view.record(this.run)?.meta;
    return { notes: meta?.notes ?? '', tags: meta?.tags ?? [] };
  }

  private ref(file: string): CkptRef {
    return { ...this.run, file };
  }

  private post(): void {
    const msg: HostMessage = { type: 'state', state: this.state };
    void this.panel.webview.postMessage(msg);
  }

  private set(patch: Partial<ExplorerState>): void {
    this.state = { ...this.state, ...patch };
    this.post();
  }

  /** Rebuilds the rows from the view's (possibly reloaded) data. */
  private async reload(): Promise<void> {
    const l = await this.host.view.load(this.run);
    const info = l.info;
    if (!info) {
      this.set({ busy: null, error: l.error ?? vscode.l10n.t('the run could not be read'), rows: [] });
      return;
    }
    this.files = new Set(info.checkpoints.map((c) => c.file));
    const name = this.host.displayName?.(this.run) ?? this.host.view.record(this.run)?.name ?? this.run.runId;
    this.panel.title = vscode.l10n.t('Checkpoints: {0}', name);
    const rows = info.checkpoints.map((c) => toRow(c, l.problems.get(c.file) ?? null));
    const selected = this.state.selected && this.files.has(this.state.selected) ? this.state.selected : null;
    this.set({
      run: {
        ...this.state.run,
        // a rename or an edit of notes or tags redraws the view, which reloads this
        name,
        ...this.userMeta(),
        backbone: info.backbone,
        pretrained: info.pretrained,
        ...weightsFacts(info.checkpoints),
        freeze: info.freeze,
        classes: info.classes,
        live: this.host.isLive(this.run),
      },
      rows,
      problems: [
        ...info.problems.map((p) => ({ label: p.label, message: p.message })),
        ...info.unlisted.map((f) => ({ label: f, message: vscode.l10n.t('not in checkpoints.json') })),
      ],
      selected,
      tensors: selected && this.state.tensors?.file === selected ? this.state.tensors : null,
      comparison: this.compared.every((f) => this.files.has(f)) ? this.state.comparison : null,
      gallery: this.state.gallery && this.files.has(this.state.gallery.file) ? this.state.gallery : null,
      predictionsComparison:
        this.state.predictionsComparison &&
        this.files.has(this.state.predictionsComparison.a) &&
        this.files.has(this.state.predictionsComparison.b)
          ? this.state.predictionsComparison
          : null,
      busy: this.state.busy === vscode.l10n.t('Reading checkpoints…') ? null : this.state.busy,
    });
    // A kept evaluation of the selected checkpoint is shown until a new one replaces it.
    const kept = info.checkpoints.find((c) => c.file === selected)?.lastEval;
    if (kept && (!this.state.evaluation || this.state.evaluation.file !== selected))
      this.set({ evaluation: toEvalView(selected!, kept) });
  }

  private async busy<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
    this.set({ busy: what, error: null });
    try {
      return await fn();
    } catch (e) {
      this.host.log(`checkpoint explorer: ${what} ${errorText(e)}`);
      this.set({ error: errorText(e) });
      return undefined;
    } finally {
      this.set({ busy: null });
    }
  }

  async select(file: string): Promise<void> {
    await this.host.view.load(this.run);
    this.set({ selected: file, tensors: this.state.tensors?.file === file ? this.state.tensors : null });
    const l = this.host.view.cached(this.run);
    const kept = l?.info?.checkpoints.find((c) => c.file === file)?.lastEval;
    if (kept) this.set({ evaluation: toEvalView(file, kept) });
    if (this.state.tensors?.file === file) return;
    const res = await this.busy(vscode.l10n.t('Inspecting {0}…', path.posix.basename(file)), () =>
      this.host.inspect(this.ref(file)),
    );
    if (res && this.state.selected === file) this.set({ tensors: toTensorsView(file, res) });
  }

  async evaluate(file: string, data?: 'val' | 'pick'): Promise<void> {
    this.panel.reveal();
    const res = await this.busy(vscode.l10n.t('Evaluating {0}…', path.posix.basename(file)), () =>
      this.host.evaluate(this.ref(file), data),
    );
    if (res) {
      this.evals.set(file, res);
      this.set({ selected: file, evaluation: toEvalView(file, res), gallery: null });
    }
  }

  /** The newest evaluation of a checkpoint: run here, else kept beside it (`<ckpt>.eval.json`). */
  private evalOf(file: string): EvalResult | undefined {
    return (
      this.evals.get(file) ?? this.host.view.cached(this.run)?.info?.checkpoints.find((c) => c.file === file)?.lastEval
    );
  }

  async gallery(file: string, what: GalleryWhat): Promise<void> {
    const ev = this.evalOf(file);
    if (!ev) {
      this.set({ error: vscode.l10n.t('{0} has no evaluation: evaluate it first.', path.posix.basename(file)) });
      return;
    }
    const res = await this.busy(vscode.l10n.t('Fetching thumbnails…'), () =>
      galleryView(file, ev, what, (root, files) => this.host.thumbs(this.ref(file), root, files), vscode.l10n.t),
    );
    if (res) this.set({ gallery: res });
  }

  async comparePredictions(a: string, b: string): Promise<void> {
    const ea = this.evalOf(a);
    const eb = this.evalOf(b);
    const why = cannotCompare(a, b, ea, eb, vscode.l10n.t);
    if (why) {
      this.set({ error: why });
      return;
    }
    const res = await this.busy(vscode.l10n.t('Comparing predictions…'), () =>
      predictionsCompareView(
        a,
        b,
        ea!,
        eb!,
        (root, files) => this.host.thumbs(this.ref(a), root, files),
        vscode.l10n.t,
      ),
    );
    if (res) this.set({ predictionsComparison: res });
  }

  async compare(a: string, b?: CkptRef): Promise<void> {
    this.panel.reveal();
    const res = await this.busy(vscode.l10n.t('Comparing…'), () => this.host.compare(this.ref(a), b));
    if (!res) return;
    this.compared = [res.a.file, ...(res.b.runId === this.run.runId ? [res.b.file] : [])];
    this.set({
      comparison: toCompareView(
        res.a.file,
        res.b.runId === this.run.runId ? res.b.file : `${res.b.runId}/${res.b.file}`,
        res.result,
      ),
    });
  }

  private async onMessage(raw: unknown): Promise<void> {
    const v = validateUiMessage(raw, this.files);
    if (!v.ok) {
      this.host.log(`checkpoint explorer: refused a message: ${v.error}`);
      return;
    }
    const m = v.message;
    switch (m.type) {
      case 'ready':
        return this.post();
      case 'refresh':
        this.host.view.refresh(this.run, true);
        return;
      case 'select':
        return this.select(m.file);
      case 'evaluate':
        return this.evaluate(m.file, m.data);
      case 'export':
        await this.busy(vscode.l10n.t('Exporting {0}…', path.posix.basename(m.file)), () =>
          this.host.exportTo(this.ref(m.file), m.format),
        );
        return;
      case 'compare':
        return this.compare(m.a, this.ref(m.b));
      case 'gallery':
        return this.gallery(m.file, m.what);
      case 'closeGallery':
        this.set({ gallery: null, predictionsComparison: null });
        return;
      case 'comparePredictions':
        return this.comparePredictions(m.a, m.b);
      case 'action':
        await this.busy('', () => this.host.action(m.action, this.ref(m.file)));
        return;
      case 'prune':
        await this.busy(vscode.l10n.t('Pruning…'), () => this.host.prune(this.run, m.keepNewest));
        return;
    }
  }

  private dispose(): void {
    CheckpointExplorer.open.delete(runKey(this.run));
    for (const s of this.subs.splice(0)) s.dispose();
  }
}

/** Where the weights came from, as the newest checkpoint that recorded it says. */
function weightsFacts(cs: readonly CheckpointDetail[]): {
  weightsSha256: string | null;
  weightsFirst: string | null;
  preprocess: string | null;
} {
  const newest = [...cs].sort((a, b) => b.order - a.order);
  return {
    weightsSha256: runWeights(cs)?.sha256 ?? null,
    weightsFirst: runWeights(cs)?.firstSource ?? null,
    preprocess: newest.find((c) => c.preprocess)?.preprocess ?? null,
  };
}

function toRow(c: CheckpointDetail, problem: string | null): CheckpointRow {
  return {
    file: c.file,
    name: path.posix.basename(c.file),
    epoch: c.epoch,
    step: c.step,
    loss: c.loss,
    valLoss: c.valLoss,
    valAcc: c.valAcc,
    reason: c.reason,
    bytes: c.bytes,
    createdAt: c.createdAt,
    best: c.best,
    ...(c.kind ? { kind: c.kind } : {}),
    problem,
    exports: c.exports,
    evalAcc: c.lastEval?.accuracy ?? null,
    valTop5: c.valTop5 ?? null,
  };
}

function toTensorsView(file: string, r: InspectResult): TensorsView {
  return {
    file,
    total: r.total_elements,
    headOut: r.head_out ?? null,
    headMatchesClasses: r.head_matches_classes ?? null,
    tensors: r.tensors.map((t) => ({
      name: t.name,
      shape: t.shape,
      dtype: t.dtype,
      elements: t.elements,
      module: t.group,
      trainable: t.trainable,
    })),
  };
}

function toEvalView(file: string, r: EvalResult): EvalView {
  return {
    file,
    data: r.data,
    numImages: r.num_images,
    accuracy: r.accuracy,
    loss: r.loss,
    classes: r.classes,
    perClass: r.per_class,
    confusion: r.confusion,
    skipped: r.skipped.length,
    evaluatedAt: r.evaluated_at,
    top5: r.top5,
    recorded: r.predictions_kept,
    mistakes: mistakeCount(r),
  };
}

function toCompareView(a: string, b: string, r: CompareResult): CompareView {
  // Largest change first: what a user looks at; the frozen part sits at the bottom with 0.
  const tensors = [...r.tensors]
    .sort((x, y) => (y.l2_diff ?? -1) - (x.l2_diff ?? -1))
    .map((t) => ({
      name: t.name,
      shape: t.shape,
      l2: t.l2_diff,
      rel: t.rel_change,
      frozen: t.frozen,
      group: groupOf(t.name, t.kind),
    }));
  return {
    a,
    b,
    tensors,
    onlyInA: r.only_in_a,
    onlyInB: r.only_in_b,
    shapeMismatch: r.shape_mismatch,
    changed: r.summary.changed,
    unchanged: r.summary.unchanged,
    frozenMaxL2: r.summary.frozen_max_l2,
  };
}

/** The page (src/core/webviewPage.ts) with the explorer's bundle (webview/checkpoints: script and stylesheet). */
export function explorerHtml(
  webview: Pick<vscode.Webview, 'asWebviewUri' | 'cspSource'>,
  extensionUri: vscode.Uri,
): string {
  return webviewPage({
    ...bundleAssets(webview, extensionUri, 'checkpoints'),
    l10n: pageL10n(),
    title: vscode.l10n.t('Checkpoints'),
    placeholder: vscode.l10n.t('Loading…'),
  });
}
