// The Checkpoints view: every run's checkpoints, grouped by run (the run selected in the Runs view
// first), under the run's pretrained source as their parent; epoch/step, val accuracy, loss, size
// and age on each, a star on the best, an error icon with the reason on a file that is missing,
// truncated or no longer matches its sha256 (`verify`). It also owns the checkpoint actions,
// which the tree's menus and the checkpoint explorer both call. Decisions live in src/core.
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  checkpointPath,
  classMismatch,
  classMismatchText,
  compareCheckpoints,
  deleteCheckpoints,
  evaluateCheckpoint,
  exportCheckpoint,
  inspectCheckpoint,
  verifyCheckpoints,
  verifyProblem,
  type CompareResult,
  type EvalResult,
  type ExportFormat,
} from '../core/checkpoints/client';
import { downloadCheckpoint, downloadPath, IntegrityError } from '../core/checkpoints/download';
import { describeEntry, formatBytes } from '../core/checkpoints/manifest';
import { deletePlan, listForConfirmation, prunePlan } from '../core/checkpoints/prune';
import { readRunCheckpoints, type CheckpointDetail, type RunCheckpoints } from '../core/checkpoints/runInfo';
import { isLive } from '../core/runs/presentation';
import type { RunRecord } from '../core/runs/runIndex';
import { choicesFromSpec } from '../core/spec/builder';
import { listFolder } from '../core/targets/ops';
import type { TargetDef } from '../core/targets/model';
import type { CommandId } from '../shared/commands';
import type { App } from './app';
import { CheckpointExplorer, type ExplorerHost } from './checkpointExplorer';
import { errorText } from './context';
import { launchSpec } from './launch';
import { runKey, type RunRef } from './runMonitor';
import type { RunsNode } from './runs';
import { startWizard } from './startWizard';

export interface CkptRef extends RunRef {
  /** The manifest `file`, relative to the run directory. */
  file: string;
}

export type CkptNode =
  | ({ kind: 'run' } & RunRef)
  | ({ kind: 'source' } & RunRef)
  | ({ kind: 'ckpt' } & CkptRef)
  | ({ kind: 'export'; exportFile: string } & CkptRef)
  | ({ kind: 'problem'; label: string; message: string } & RunRef)
  | ({ kind: 'message'; text: string; error: boolean } & RunRef);

interface Loaded {
  info?: RunCheckpoints;
  /** file -> why it is unusable (from `verify`); empty when verify is not available. */
  problems: Map<string, string>;
  error?: string;
  loading?: Promise<void>;
  /** What the run's live view looked like at load time: a change reloads (a new checkpoint). */
  stamp: string;
}

const TIMEOUT_MS = 120_000;
/** eval and export load MindSpore and run the network: give them longer. */
const LONG_TIMEOUT_MS = 30 * 60_000;

export class CheckpointsView implements vscode.TreeDataProvider<CkptNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<CkptNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly cache = new Map<string, Loaded>();
  private selected: RunRef | undefined;
  private verifyMissingLogged = false;
  /**
   * `verify` results per run, file and sha256 (null: fine). `verify` hashes every file, so a reload
   * (a new epoch of a live run, an export) verifies only checkpoints it has not seen; Refresh
   * verifies everything again.
   */
  private readonly verified = new Map<string, string | null>();
  private readonly subscriptions: vscode.Disposable[] = [];

  /** The runs listed at the last redraw: `ls` adds and removes runs through the Runs view. */
  private shownRuns = '';

  constructor(private readonly app: App) {
    this.subscriptions.push(
      app.monitor.onDidChange(() => this.reloadChanged()),
      app.ctx.onDidChangeTargets(() => this.refresh()),
      // The Runs view redraws often (live progress); only a changed list of runs redraws this one.
      app.runs.onDidChangeTreeData(() => {
        if (this.runList() !== this.shownRuns) this.changed.fire(undefined);
      }),
    );
  }

  private runList(): string {
    return this.app.ctx.index
      .all()
      .map((r) => `${runKey(r)}\0${r.name ?? ''}`)
      .join('\n');
  }

  /** Follows the Runs view's selection (the fake host of the unit tests has no selection events). */
  followSelection(tree: vscode.TreeView<RunsNode>): void {
    const on = (tree as Partial<vscode.TreeView<RunsNode>>).onDidChangeSelection;
    if (typeof on !== 'function') return;
    this.subscriptions.push(
      on.call(tree, (e) => {
        const n = e.selection[0];
        if (n?.kind !== 'run') return;
        this.selected = { targetId: n.targetId, runId: n.runId };
        this.changed.fire(undefined);
      }),
    );
  }

  /** Puts a run first (expanded) and reloads it: after it finished, its checkpoints are final. */
  showRun(ref: RunRef): void {
    this.selected = { targetId: ref.targetId, runId: ref.runId };
    this.refresh(ref);
  }

  /** Forgets what was loaded (all runs, or one) and redraws; runs load again when shown. */
  refresh(ref?: RunRef, reverify = false): void {
    if (ref) this.cache.delete(runKey(ref));
    else this.cache.clear();
    if (reverify)
      for (const k of [...this.verified.keys()]) if (!ref || k.startsWith(`${runKey(ref)}\0`)) this.verified.delete(k);
    this.changed.fire(undefined);
  }

  private stampOf(ref: RunRef): string {
    const v = this.app.monitor.view(ref);
    return v ? `${v.phase}|${v.status ?? ''}|${v.epoch ?? ''}|${v.bestValAcc ?? ''}` : '';
  }

  /** A live run that reached a new epoch or ended has new checkpoints: reload it if it was loaded. */
  private reloadChanged(): void {
    for (const [key, l] of this.cache) {
      const r = this.recordByKey(key);
      if (r && !l.loading && this.stampOf(r) !== l.stamp) this.refresh(r);
    }
  }

  private recordByKey(key: string): RunRecord | undefined {
    return this.app.ctx.index.all().find((r) => runKey(r) === key);
  }

  record(ref: RunRef): RunRecord | undefined {
    return this.app.ctx.index.get(ref.targetId, ref.runId);
  }

  /** The run's checkpoints, loading them (once at a time) if needed. */
  async load(ref: RunRef): Promise<Loaded> {
    const key = runKey(ref);
    let l = this.cache.get(key);
    if (l?.info || l?.error) return l;
    if (l?.loading) {
      await l.loading;
      return this.cache.get(key) ?? l;
    }
    const entry: Loaded = { problems: new Map(), stamp: this.stampOf(ref) };
    entry.loading = this.fetch(ref, entry).finally(() => {
      entry.loading = undefined;
      this.changed.fire(undefined);
    });
    this.cache.set(key, entry);
    l = entry;
    await entry.loading;
    return l;
  }

  private async fetch(ref: RunRef, into: Loaded): Promise<void> {
    const record = this.record(ref);
    const def = this.app.ctx.target(ref.targetId);
    if (!record || !def) {
      into.error = def ? 'run not found (refresh the Runs view)' : `target ${ref.targetId} is not configured`;
      return;
    }
    try {
      into.info = await readRunCheckpoints(this.app.ctx.python(def), record.runDir, { timeoutMs: TIMEOUT_MS });
    } catch (e) {
      into.error = errorText(e);
      return;
    }
    const vkey = (file: string, sha: string | null) => `${runKey(ref)}\0${file}\0${sha ?? ''}`;
    const entries = into.info.checkpoints;
    if (entries.some((c) => !this.verified.has(vkey(c.file, c.sha256)))) {
      try {
        await this.app.ctx.ensureRunner(def);
        const results = new Map(
          (await verifyCheckpoints(this.app.ctx.transport(def), record.runDir, { timeoutMs: TIMEOUT_MS })).map((v) => [
            v.file,
            verifyProblem(v) ?? null,
          ]),
        );
        for (const c of entries)
          if (results.has(c.file)) this.verified.set(vkey(c.file, c.sha256), results.get(c.file)!);
      } catch (e) {
        // An older runner has no `verify`: list the checkpoints unverified rather than not at all.
        if (!this.verifyMissingLogged) this.app.ctx.log.warn(`checkpoint verify on ${def.label}: ${errorText(e)}`);
        this.verifyMissingLogged = true;
      }
    }
    for (const c of entries) {
      const p = this.verified.get(vkey(c.file, c.sha256));
      if (p) into.problems.set(c.file, p);
    }
  }

  /** Cached info without loading (for synchronous tree rendering). */
  cached(ref: RunRef): Loaded | undefined {
    return this.cache.get(runKey(ref));
  }

  getChildren(node?: CkptNode): CkptNode[] {
    if (!node) {
      this.shownRuns = this.runList();
      const runs = this.app.ctx.index.all();
      const sel = this.selected;
      const first = sel ? runs.filter((r) => r.targetId === sel.targetId && r.runId === sel.runId) : [];
      return [...first, ...runs.filter((r) => !first.includes(r))].map((r) => ({
        kind: 'run',
        targetId: r.targetId,
        runId: r.runId,
      }));
    }
    const ref: RunRef = { targetId: node.targetId, runId: node.runId };
    const l = this.cache.get(runKey(ref));
    if (node.kind === 'run') {
      if (!l || l.loading) {
        if (!l) void this.load(ref);
        return [{ kind: 'message', ...ref, text: 'Loading checkpoints…', error: false }];
      }
      if (l.error) return [{ kind: 'message', ...ref, text: l.error, error: true }];
      const info = l.info!;
      const out: CkptNode[] = [];
      if (info.checkpoints.length) out.push({ kind: 'source', ...ref });
      else if (info.problems.length === 0)
        out.push({ kind: 'message', ...ref, text: 'No checkpoints yet', error: false });
      for (const p of info.problems) out.push({ kind: 'problem', ...ref, label: p.label, message: p.message });
      for (const f of info.unlisted)
        out.push({
          kind: 'problem',
          ...ref,
          label: f,
          message: 'not in checkpoints.json (left by an interrupted save or prune?)',
        });
      return out;
    }
    if (node.kind === 'source')
      return (l?.info?.checkpoints ?? []).map((c) => ({ kind: 'ckpt', ...ref, file: c.file }));
    if (node.kind === 'ckpt') {
      const c = l?.info?.checkpoints.find((x) => x.file === node.file);
      return (c?.exports ?? []).map((x) => ({ kind: 'export', ...ref, file: node.file, exportFile: x.file }));
    }
    return [];
  }

  getTreeItem(node: CkptNode): vscode.TreeItem {
    const ref: RunRef = { targetId: node.targetId, runId: node.runId };
    const l = this.cache.get(runKey(ref));
    const def = this.app.ctx.target(node.targetId);
    const where = def?.kind === 'ssh' ? 'ssh' : 'local';
    switch (node.kind) {
      case 'run': {
        const r = this.record(ref);
        const isSel = this.selected?.targetId === ref.targetId && this.selected.runId === ref.runId;
        const item = new vscode.TreeItem(
          r?.name ?? node.runId,
          isSel ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
        );
        item.id = `ckrun/${runKey(ref)}${isSel ? '/sel' : ''}`;
        const n = l?.info?.checkpoints.length;
        item.description = [def?.label ?? node.targetId, n === undefined ? '' : `${n} checkpoint${n === 1 ? '' : 's'}`]
          .filter(Boolean)
          .join(' · ');
        item.tooltip = r ? `${r.runId}\n${r.runDir}` : node.runId;
        item.iconPath = new vscode.ThemeIcon(def?.kind === 'ssh' ? 'remote' : 'history');
        item.contextValue = `checkpointRun.${where}`;
        return item;
      }
      case 'source': {
        const p = l?.info?.pretrained ?? null;
        const item = new vscode.TreeItem(
          p ? `from ${path.posix.basename(p)}` : 'from random initialization',
          vscode.TreeItemCollapsibleState.Expanded,
        );
        item.id = `cksrc/${runKey(ref)}`;
        item.description = [l?.info?.backbone, l?.info?.freeze ? `freeze ${l.info.freeze}` : '']
          .filter(Boolean)
          .join(' · ');
        item.tooltip = p ? `Pretrained weights: ${p}` : 'No pretrained weights: the run started from random weights.';
        item.iconPath = new vscode.ThemeIcon(p ? 'references' : 'circle-outline');
        item.contextValue = 'checkpointSource';
        return item;
      }
      case 'ckpt': {
        const c = l?.info?.checkpoints.find((x) => x.file === node.file);
        const problem = l?.problems.get(node.file);
        const item = new vscode.TreeItem(
          path.posix.basename(node.file),
          c?.exports.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
        );
        item.id = `ckpt/${runKey(ref)}/${node.file}`;
        const now = Date.now() / 1000;
        item.description = problem ? problem : c ? describeEntry(c, now) : '';
        item.iconPath = problem
          ? new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground'))
          : c?.best
            ? new vscode.ThemeIcon('star-full', new vscode.ThemeColor('charts.yellow'))
            : new vscode.ThemeIcon('database');
        item.tooltip = c ? tooltip(c, problem) : node.file;
        item.contextValue = `checkpoint.${where}.${c?.best ? 'best' : 'plain'}${problem ? '.bad' : ''}`;
        item.command = {
          command: 'ascend.checkpoints.openExplorer' satisfies CommandId,
          title: 'Open Checkpoint Explorer',
          arguments: [node],
        };
        return item;
      }
      case 'export': {
        const c = l?.info?.checkpoints.find((x) => x.file === node.file);
        const x = c?.exports.find((e) => e.file === node.exportFile);
        const item = new vscode.TreeItem(path.posix.basename(node.exportFile), vscode.TreeItemCollapsibleState.None);
        item.id = `ckexp/${runKey(ref)}/${node.exportFile}`;
        item.description = x ? `${x.format === 'onnx' ? 'ONNX' : 'MindIR'} · ${formatBytes(x.bytes)}` : '';
        item.iconPath = new vscode.ThemeIcon('package');
        item.contextValue = `checkpointExport.${where}`;
        return item;
      }
      case 'problem': {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.description = node.message;
        item.tooltip = `${node.label}: ${node.message}`;
        item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground'));
        item.contextValue = 'checkpointProblem';
        return item;
      }
      case 'message': {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
        item.iconPath = new vscode.ThemeIcon(
          node.error ? 'error' : 'info',
          node.error ? new vscode.ThemeColor('errorForeground') : undefined,
        );
        item.contextValue = 'checkpointMessage';
        return item;
      }
    }
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.changed.dispose();
  }
}

function tooltip(c: CheckpointDetail, problem: string | undefined): string {
  const lines = [c.file];
  if (problem) lines.push(`⚠ ${problem}`);
  if (c.best) lines.push('★ best validation accuracy');
  if (c.epoch !== null || c.step !== null) lines.push(`epoch ${c.epoch ?? '?'}, step ${c.step ?? '?'}`);
  if (c.valAcc !== null) lines.push(`val acc ${(c.valAcc * 100).toFixed(2)}%`);
  if (c.valLoss !== null) lines.push(`val loss ${c.valLoss}`);
  if (c.loss !== null) lines.push(`loss ${c.loss}`);
  if (c.reason) lines.push(`saved: ${c.reason}`);
  if (c.bytes !== null) lines.push(`${formatBytes(c.bytes)} (${c.bytes} bytes)`);
  if (c.sha256) lines.push(`sha256 ${c.sha256}`);
  if (c.createdAt !== null) lines.push(`saved ${new Date(c.createdAt * 1000).toLocaleString()}`);
  if (c.lastEval)
    lines.push(
      `last eval: ${c.lastEval.accuracy === null ? '?' : (c.lastEval.accuracy * 100).toFixed(2) + '%'} on ${c.lastEval.data}`,
    );
  if (c.source === 'events') lines.push('(checkpoints.json unreadable: shown from the event log)');
  return lines.join('\n');
}

// ---- the actions ----

/** The view must exist on the app: commands are registered before any tree is used. */
function viewOf(app: App): CheckpointsView {
  if (!app.checkpoints) throw new Error('the Checkpoints view is not set up');
  return app.checkpoints;
}

interface Resolved {
  def: TargetDef;
  record: RunRecord;
  info: RunCheckpoints;
  entry: CheckpointDetail;
  /** Absolute path on the target. */
  abs: string;
}

async function resolve(app: App, ref: CkptRef): Promise<Resolved> {
  const view = viewOf(app);
  const record = view.record(ref);
  const def = app.ctx.target(ref.targetId);
  if (!record || !def) throw new Error(`run ${ref.runId} or its target is not known any more`);
  const l = await view.load(ref);
  if (!l.info) throw new Error(l.error ?? 'the run could not be read');
  const entry = l.info.checkpoints.find((c) => c.file === ref.file);
  if (!entry) throw new Error(`${ref.file} is no longer in checkpoints.json (refresh the view)`);
  return { def, record, info: l.info, entry, abs: checkpointPath(record.runDir, entry.file) };
}

function isCkptNode(n: unknown): n is CkptRef {
  if (typeof n !== 'object' || n === null) return false;
  const o = n as Partial<CkptRef>;
  return typeof o.targetId === 'string' && typeof o.runId === 'string' && typeof o.file === 'string';
}

function isRunRef(n: unknown): n is RunRef {
  if (typeof n !== 'object' || n === null) return false;
  const o = n as Partial<RunRef>;
  return typeof o.targetId === 'string' && typeof o.runId === 'string';
}

/** The checkpoint(s) a command is about: the clicked node and the tree's selection, or one picked. */
async function refsOf(app: App, node: unknown, nodes: unknown, title: string): Promise<CkptRef[]> {
  const many = Array.isArray(nodes) ? nodes.filter(isCkptNode) : [];
  if (many.length) return many.map(({ targetId, runId, file }) => ({ targetId, runId, file }));
  if (isCkptNode(node)) return [{ targetId: node.targetId, runId: node.runId, file: node.file }];
  const one = await pickCheckpoint(app, title, isRunRef(node) ? node : undefined);
  return one ? [one] : [];
}

async function pickCheckpoint(app: App, title: string, run?: RunRef, exclude?: string): Promise<CkptRef | undefined> {
  const view = viewOf(app);
  const runs = run ? [run] : app.ctx.index.all();
  const items = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'Ascend: reading checkpoints' },
    async () => {
      const out: (vscode.QuickPickItem & { ref: CkptRef })[] = [];
      for (const r of runs) {
        const l = await view.load(r);
        const name = view.record(r)?.name ?? r.runId;
        for (const c of l.info?.checkpoints ?? []) {
          if (c.file === exclude) continue;
          out.push({
            label: `${c.best ? '$(star-full) ' : ''}${path.posix.basename(c.file)}`,
            description: `${name} · ${describeEntry(c, Date.now() / 1000)}`,
            ref: { targetId: r.targetId, runId: r.runId, file: c.file },
          });
        }
      }
      return out;
    },
  );
  if (items.length === 0) {
    void vscode.window.showInformationMessage('No checkpoints found.');
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { title, matchOnDescription: true }))?.ref;
}

/** The folder to evaluate on: the run's validation set (undefined), a picked one, or cancel (null). */
export async function pickEvalData(app: App, r: Resolved, choice?: 'val' | 'pick'): Promise<string | undefined | null> {
  if (choice === undefined) {
    const items = [
      {
        label: "$(check) The run's validation set",
        description: r.info.valData ?? `held-out split of ${r.info.trainData ?? 'the training folder'}`,
        v: 'val' as const,
      },
      { label: `$(folder-opened) Another ImageFolder on ${r.def.label}…`, v: 'pick' as const },
    ];
    choice = (await vscode.window.showQuickPick(items, { title: `Evaluate ${path.posix.basename(r.entry.file)}` }))?.v;
    if (!choice) return null;
  }
  if (choice === 'val') return undefined;
  let dir = r.info.valData ?? r.info.trainData ?? '~';
  for (;;) {
    let listing;
    try {
      listing = await listFolder(app.ctx.python(r.def), dir);
    } catch (e) {
      void vscode.window.showErrorMessage(`Cannot list ${dir} on ${r.def.label}: ${errorText(e)}`);
      dir = '~';
      continue;
    }
    const items = [
      { label: '$(check) Use this folder', description: listing.path, use: listing.path },
      ...(listing.parent !== listing.path
        ? [{ label: '$(arrow-up) ..', description: listing.parent, go: listing.parent }]
        : []),
      ...listing.dirs.map((d) => ({ label: `$(folder) ${d}`, go: path.posix.join(listing.path, d) })),
    ] as (vscode.QuickPickItem & { use?: string; go?: string })[];
    const r2 = await vscode.window.showQuickPick(items, {
      title: `An ImageFolder on ${r.def.label} (one sub-folder per class)`,
    });
    if (!r2) return null;
    if (r2.use) return r2.use;
    if (r2.go) dir = r2.go;
  }
}

export async function evaluate(app: App, ref: CkptRef, choice?: 'val' | 'pick'): Promise<EvalResult | undefined> {
  const r = await resolve(app, ref);
  const data = await pickEvalData(app, r, choice);
  if (data === null) return undefined;
  await app.ctx.ensureRunner(r.def);
  const name = path.posix.basename(r.entry.file);
  try {
    const res = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Ascend: evaluating ${name}${data ? ` on ${data}` : ''}…`,
      },
      () =>
        evaluateCheckpoint(app.ctx.transport(r.def), r.record.runDir, r.abs, { data }, { timeoutMs: LONG_TIMEOUT_MS }),
    );
    app.ctx.log.info(`eval ${r.abs}: accuracy ${res.accuracy} on ${res.num_images} images of ${res.data}`);
    viewOf(app).refresh(ref); // the result is kept next to the checkpoint
    return res;
  } catch (e) {
    const m = classMismatch(e);
    throw m ? new Error(classMismatchText(m)) : e;
  }
}

export async function exportTo(app: App, ref: CkptRef, format: ExportFormat): Promise<void> {
  const r = await resolve(app, ref);
  await app.ctx.ensureRunner(r.def);
  const label = format === 'onnx' ? 'ONNX' : 'MindIR';
  const res = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Ascend: exporting ${path.posix.basename(r.entry.file)} to ${label}…`,
    },
    () =>
      exportCheckpoint(app.ctx.transport(r.def), r.record.runDir, r.abs, format, undefined, {
        timeoutMs: LONG_TIMEOUT_MS,
      }),
  );
  app.ctx.log.info(`export ${r.abs} -> ${res.file} (${res.bytes} bytes, input ${res.input_shape.join('x')})`);
  viewOf(app).refresh(ref);
  const actions = r.def.kind === 'local' ? ['Reveal'] : [];
  void vscode.window
    .showInformationMessage(
      `Exported ${label}: ${res.file} (${formatBytes(res.bytes)}, input ${res.input_shape.join('×')}).`,
      ...actions,
    )
    .then((a) => {
      if (a === 'Reveal') void vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(res.file));
    });
}

export async function compare(
  app: App,
  a: CkptRef,
  b?: CkptRef,
): Promise<{ a: CkptRef; b: CkptRef; result: CompareResult } | undefined> {
  const ra = await resolve(app, a);
  b ??= await pickCheckpoint(
    app,
    `Compare ${path.posix.basename(a.file)} with…`,
    { targetId: a.targetId, runId: a.runId },
    a.file,
  );
  if (!b) return undefined;
  if (b.targetId !== a.targetId) throw new Error('both checkpoints must be on the same target');
  const rb = await resolve(app, b);
  await app.ctx.ensureRunner(ra.def);
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Ascend: comparing checkpoints…' },
    () =>
      compareCheckpoints(app.ctx.transport(ra.def), ra.abs, rb.abs, ra.record.runDir, { timeoutMs: LONG_TIMEOUT_MS }),
  );
  return { a, b, result };
}

export async function resumeFrom(app: App, ref: CkptRef): Promise<void> {
  const r = await resolve(app, ref);
  if (!r.info.spec) throw new Error(`the spec.json of ${r.record.runId} cannot be read`);
  const live = isLive(app.runs.state(r.record));
  const yes = await vscode.window.showInformationMessage(
    `Resume "${r.record.name ?? r.record.runId}" from ${path.posix.basename(r.entry.file)}?`,
    {
      modal: true,
      detail: `A new run on ${r.def.label} continues from step ${r.entry.step ?? '?'} with the same spec, to the same total steps.${live ? '\nThe original run is still live.' : ''}`,
    },
    'Resume',
  );
  if (yes !== 'Resume') return;
  const outcome = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Ascend: resuming on ${r.def.label}` },
    (p) => launchSpec(app, r.def, r.info.spec!, (message) => p.report({ message }), { resume: r.abs }),
  );
  if (outcome.kind === 'problems')
    void vscode.window.showErrorMessage('The run spec no longer validates', {
      modal: true,
      detail: outcome.lines.join('\n'),
    });
  else if (outcome.kind === 'launched')
    void vscode.window.showInformationMessage(`Resumed as ${outcome.record.runId}.`);
}

export async function fineTuneFrom(app: App, ref: CkptRef): Promise<void> {
  const r = await resolve(app, ref);
  const spec = r.info.spec ?? {};
  const choices = { ...choicesFromSpec(spec), pretrained: r.abs, name: `${r.info.name ?? 'run'}-ft` };
  // The spec's other fields (val folder, image size, checkpoint policy) stay as the run had them.
  await startWizard(app, {
    targetId: r.def.id,
    choices,
    baseSpec: { ...spec, model: { ...(spec.model as object), pretrained: r.abs } },
  });
}

export async function download(app: App, ref: CkptRef): Promise<void> {
  const r = await resolve(app, ref);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  let dest: string | undefined = folder
    ? downloadPath(path.join(folder, 'checkpoints'), r.record.runId, r.entry.file)
    : undefined;
  if (!dest)
    dest = (
      await vscode.window.showSaveDialog({
        title: 'Download the checkpoint to',
        saveLabel: 'Download',
        filters: { Checkpoint: ['ckpt', 'safetensors'] },
      })
    )?.fsPath;
  if (!dest) return;
  const total = r.entry.bytes;
  try {
    const res = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Ascend: downloading ${path.posix.basename(r.entry.file)} from ${r.def.label}`,
        cancellable: true,
      },
      (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        let last = 0;
        return downloadCheckpoint(
          app.ctx.python(r.def),
          r.abs,
          dest!,
          { bytes: r.entry.bytes, sha256: r.entry.sha256 },
          {
            signal: abort.signal,
            onProgress: (done) => {
              const pct = total ? (100 * done) / total : 0;
              progress.report({
                message: `${formatBytes(done)}${total ? ` of ${formatBytes(total)}` : ''}`,
                increment: total ? pct - last : undefined,
              });
              last = pct;
            },
          },
        );
      },
    );
    app.ctx.log.info(
      `downloaded ${r.abs} from ${r.def.label} to ${res.file} (sha256 ${res.sha256}, verified ${res.verified})`,
    );
    const note = res.verified
      ? 'sha256 verified against checkpoints.json'
      : 'NOT verified: checkpoints.json has no sha256 for it';
    void vscode.window
      .showInformationMessage(`Downloaded to ${vscode.workspace.asRelativePath(res.file)} (${note}).`, 'Reveal')
      .then((a) => {
        if (a) void vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(res.file));
      });
  } catch (e) {
    if (e instanceof IntegrityError)
      void vscode.window.showErrorMessage(`Download failed the integrity check: ${e.message}`, { modal: true });
    else throw e;
  }
}

export async function reveal(app: App, ref: CkptRef): Promise<void> {
  const r = await resolve(app, ref);
  if (r.def.kind !== 'local') {
    void vscode.window
      .showInformationMessage(`${path.posix.basename(r.abs)} is on ${r.def.label}: download it first.`, 'Download')
      .then((a) => {
        if (a) void download(app, ref).catch((e) => vscode.window.showErrorMessage(errorText(e)));
      });
    return;
  }
  await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(r.abs));
}

export async function copyPath(app: App, ref: CkptRef): Promise<void> {
  const r = await resolve(app, ref);
  await vscode.env.clipboard.writeText(r.abs);
  vscode.window.setStatusBarMessage(`Copied ${r.abs}${r.def.kind === 'ssh' ? ` (on ${r.def.label})` : ''}`, 4000);
}

/**
 * Deletes checkpoints of one run after a confirmation that lists them all; the best, if selected,
 * only after a second, explicit one (also when it is the only one selected). A no to the second
 * still deletes the others.
 */
export async function deleteSome(app: App, refs: CkptRef[]): Promise<void> {
  const byRun = new Map<string, CkptRef[]>();
  for (const r of refs) byRun.set(runKey(r), [...(byRun.get(runKey(r)) ?? []), r]);
  if (byRun.size > 1) throw new Error('delete the checkpoints of one run at a time');
  const r = await resolve(app, refs[0]);
  const live = isLive(app.runs.state(r.record));
  const plan = deletePlan(
    r.info.checkpoints,
    refs.map((x) => x.file),
    live,
  );
  for (const x of plan.refused)
    void vscode.window.showWarningMessage(`Not deleting ${path.posix.basename(x.file)}: ${x.reason}.`);
  const asked = [...plan.plain, ...(plan.best ? [plan.best] : [])];
  if (!asked.length) return;
  const yes = await vscode.window.showWarningMessage(
    `Delete ${asked.length} checkpoint${asked.length === 1 ? '' : 's'} of "${r.record.name ?? r.record.runId}" on ${r.def.label}?`,
    {
      modal: true,
      detail:
        listForConfirmation(r.info.checkpoints, asked).join('\n') +
        (plan.best ? '\n\nThe best checkpoint is asked about once more.' : '') +
        '\n\nThis cannot be undone.',
    },
    'Delete',
  );
  if (yes !== 'Delete') return;
  const files = [...plan.plain];
  let allowBest = false;
  if (plan.best) {
    const sure = await vscode.window.showWarningMessage(
      `${files.length ? 'Also delete' : 'Really delete'} the BEST checkpoint ${path.posix.basename(plan.best)}?`,
      {
        modal: true,
        detail: `${listForConfirmation(r.info.checkpoints, [plan.best])[0]}\n\nIt has the run's highest validation accuracy. Delete it only if you are sure.`,
      },
      'Delete the Best Checkpoint',
    );
    if (sure === 'Delete the Best Checkpoint') {
      files.push(plan.best);
      allowBest = true;
    }
  }
  if (!files.length) return;
  await runDelete(app, r, files, allowBest);
}

/** Keep best + newest N: asks N, lists what goes, deletes after a confirmation. */
export async function prune(app: App, run: RunRef, keepNewest?: number): Promise<void> {
  const view = viewOf(app);
  const l = await view.load(run);
  if (!l.info) throw new Error(l.error ?? 'the run could not be read');
  if (keepNewest === undefined) {
    const v = await vscode.window.showInputBox({
      title: 'Prune checkpoints: keep the best and the newest N',
      value: '2',
      prompt: 'N, the newest checkpoints to keep besides the best',
      validateInput: (s) => (/^\d+$/.test(s.trim()) && Number(s) >= 1 ? undefined : 'a whole number, 1 or more'),
    });
    if (v === undefined) return;
    keepNewest = Number(v.trim());
  }
  const plan = prunePlan(l.info.checkpoints, keepNewest);
  const record = view.record(run);
  if (!record) return;
  if (plan.drop.length === 0) {
    void vscode.window.showInformationMessage(
      `Nothing to prune: ${plan.keep.length} checkpoint(s) kept (the best and the newest ${keepNewest}).`,
    );
    return;
  }
  const yes = await vscode.window.showWarningMessage(
    `Prune "${record.name ?? record.runId}": delete ${plan.drop.length} checkpoint${plan.drop.length === 1 ? '' : 's'}?`,
    {
      modal: true,
      detail: `Deleted:\n${listForConfirmation(l.info.checkpoints, plan.drop).join('\n')}\n\nKept:\n${listForConfirmation(l.info.checkpoints, plan.keep).join('\n')}`,
    },
    'Delete',
  );
  if (yes !== 'Delete') return;
  const r = await resolve(app, { ...run, file: plan.drop[0] });
  await runDelete(app, r, plan.drop, false);
}

async function runDelete(app: App, r: Resolved, files: string[], allowBest: boolean): Promise<void> {
  await app.ctx.ensureRunner(r.def);
  const res = await deleteCheckpoints(app.ctx.transport(r.def), r.record.runDir, files, allowBest, {
    timeoutMs: TIMEOUT_MS,
  });
  app.ctx.log.info(`deleted ${res.deleted.join(', ')} in ${r.record.runDir}; kept ${res.kept.join(', ')}`);
  viewOf(app).refresh(r.record);
  const notDone = files.filter((f) => !res.deleted.some((d) => d === f || d.endsWith(`/${path.posix.basename(f)}`)));
  if (notDone.length)
    void vscode.window.showWarningMessage(`The runner kept ${notDone.map((f) => path.posix.basename(f)).join(', ')}.`);
}

// ---- the explorer's host side, and the commands ----

const explorerHost = (app: App): ExplorerHost => ({
  view: viewOf(app),
  targetLabel: (id) => app.ctx.target(id)?.label ?? id,
  isSsh: (id) => app.ctx.target(id)?.kind === 'ssh',
  isLive: (ref) => {
    const r = app.ctx.index.get(ref.targetId, ref.runId);
    return r ? isLive(app.runs.state(r)) : false;
  },
  inspect: async (ref) => {
    const r = await resolve(app, ref);
    await app.ctx.ensureRunner(r.def);
    return inspectCheckpoint(app.ctx.transport(r.def), r.abs, r.record.runDir, { timeoutMs: LONG_TIMEOUT_MS });
  },
  evaluate: (ref, data) => evaluate(app, ref, data),
  exportTo: (ref, format) => exportTo(app, ref, format),
  compare: (a, b) => compare(app, a, b),
  action: async (action, ref) => {
    const f = {
      resume: resumeFrom,
      fineTune: fineTuneFrom,
      download,
      reveal,
      copyPath,
      delete: (a: App, x: CkptRef) => deleteSome(a, [x]),
    }[action];
    await f(app, ref);
  },
  prune: (run, n) => prune(app, run, n),
  log: (m) => app.ctx.log.warn(m),
  extensionUri: app.ctx.extension.extensionUri,
});

function explorerFor(app: App, run: RunRef): CheckpointExplorer {
  return CheckpointExplorer.show(explorerHost(app), run);
}

type Handler = (...args: unknown[]) => unknown;

/** The checkpoint commands, merged into COMMAND_FACTORIES (src/vscode/commands.ts). */
export const CHECKPOINT_COMMAND_FACTORIES = {
  'ascend.checkpoints.refresh': (app: App) => (node: unknown) =>
    viewOf(app).refresh(isRunRef(node) ? node : undefined, true),
  'ascend.checkpoints.openExplorer': (app: App) => async (node: unknown) => {
    let run: RunRef | undefined = isRunRef(node) ? { targetId: node.targetId, runId: node.runId } : undefined;
    if (!run) {
      const picked = await pickCheckpoint(app, 'Open the checkpoint explorer of…');
      if (!picked) return;
      run = picked;
      node = picked;
    }
    const ex = explorerFor(app, run);
    if (isCkptNode(node)) void ex.select(node.file);
  },
  'ascend.checkpoint.evaluate': (app: App) => async (node: unknown, nodes: unknown) => {
    const [ref] = await refsOf(app, node, nodes, 'Evaluate which checkpoint?');
    if (ref) await explorerFor(app, ref).evaluate(ref.file);
  },
  'ascend.checkpoint.exportMindir': (app: App) => async (node: unknown, nodes: unknown) => {
    for (const ref of await refsOf(app, node, nodes, 'Export which checkpoint to MindIR?'))
      await exportTo(app, ref, 'mindir');
  },
  'ascend.checkpoint.exportOnnx': (app: App) => async (node: unknown, nodes: unknown) => {
    for (const ref of await refsOf(app, node, nodes, 'Export which checkpoint to ONNX?'))
      await exportTo(app, ref, 'onnx');
  },
  'ascend.checkpoint.resume': (app: App) => async (node: unknown) => {
    const [ref] = await refsOf(app, node, undefined, 'Resume from which checkpoint?');
    if (ref) await resumeFrom(app, ref);
  },
  'ascend.checkpoint.fineTuneFrom': (app: App) => async (node: unknown) => {
    const [ref] = await refsOf(app, node, undefined, 'Fine-tune from which checkpoint?');
    if (ref) await fineTuneFrom(app, ref);
  },
  'ascend.checkpoint.compare': (app: App) => async (node: unknown, nodes: unknown) => {
    const refs = await refsOf(app, node, nodes, 'Compare which checkpoint?');
    if (refs.length > 2) throw new Error('select two checkpoints to compare');
    if (refs.length) await explorerFor(app, refs[0]).compare(refs[0].file, refs[1]);
  },
  'ascend.checkpoint.download': (app: App) => async (node: unknown, nodes: unknown) => {
    for (const ref of await refsOf(app, node, nodes, 'Download which checkpoint?')) await download(app, ref);
  },
  'ascend.checkpoint.reveal': (app: App) => async (node: unknown) => {
    const [ref] = await refsOf(app, node, undefined, 'Reveal which checkpoint?');
    if (ref) await reveal(app, ref);
  },
  'ascend.checkpoint.copyPath': (app: App) => async (node: unknown) => {
    const [ref] = await refsOf(app, node, undefined, 'Copy the path of which checkpoint?');
    if (ref) await copyPath(app, ref);
  },
  'ascend.checkpoint.delete': (app: App) => async (node: unknown, nodes: unknown) => {
    const refs = await refsOf(app, node, nodes, 'Delete which checkpoint?');
    if (refs.length) await deleteSome(app, refs);
  },
  'ascend.checkpoints.prune': (app: App) => async (node: unknown) => {
    let run: RunRef | undefined = isRunRef(node) ? node : undefined;
    if (!run) {
      const items = app.ctx.index.all().map((r) => ({ label: r.name ?? r.runId, description: r.runId, r }));
      run = (await vscode.window.showQuickPick(items, { title: 'Prune the checkpoints of which run?' }))?.r;
    }
    if (run) await prune(app, { targetId: run.targetId, runId: run.runId });
  },
} satisfies Record<string, (app: App) => Handler>;

export type CheckpointCommandId = keyof typeof CHECKPOINT_COMMAND_FACTORIES;
