// The Checkpoints view: every run's checkpoints, grouped by run (the run selected in the Runs view
// first), under the run's pretrained source as their parent; epoch/step, val accuracy, loss, size
// and age on each, a star on the best, an error icon with the reason on a file that is missing,
// truncated or no longer matches its sha256 (`verify`). It loads and caches each run's checkpoints
// for the actions (actions.ts) and the checkpoint explorer (explorer.ts). Decisions live in src/core.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { verifyCheckpoints } from '../../core/checkpoints/client';
import { describeEntry, verifyProblem } from '../../core/checkpoints/describe';
import { formatBytes } from '../../core/checkpoints/manifest';
import { readRunCheckpoints, type CheckpointDetail } from '../../core/checkpoints/runInfo';
import { displayNames } from '../../core/runs/presentation';
import type { RunRecord } from '../../core/runs/runIndex';
import type { CommandId } from '../../shared/commands';
import { saveReason } from '../../shared/checkpointsProtocol';
import { errorText, type Ctx } from '../context';
import { runKey, type RunMonitor, type RunRef } from '../runMonitor';
import type { RunsNode, RunsView } from '../runs';
import { TIMEOUT_MS, type CheckpointSource, type CkptNode, type Loaded } from './types';

/** What the view needs, given at construction (the extension passes its App). */
export interface CheckpointsViewHost {
  ctx: Pick<Ctx, 'index' | 'target' | 'python' | 'transport' | 'ensureRunner' | 'log' | 'onDidChangeTargets'>;
  /** Live runs' views: a new epoch or the end of a run reloads its checkpoints. */
  monitor: Pick<RunMonitor, 'onDidChange' | 'view'>;
  /** The Runs view: a changed list of runs redraws this one. */
  runs: Pick<RunsView, 'onDidChangeTreeData'>;
}

export class CheckpointsView implements vscode.TreeDataProvider<CkptNode>, CheckpointSource, vscode.Disposable {
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

  constructor(private readonly host: CheckpointsViewHost) {
    this.subscriptions.push(
      host.monitor.onDidChange(() => this.reloadChanged()),
      host.ctx.onDidChangeTargets(() => this.refresh()),
      // The Runs view redraws often (live progress); only a changed list of runs redraws this one.
      host.runs.onDidChangeTreeData(() => {
        if (this.runList() !== this.shownRuns) this.changed.fire(undefined);
      }),
    );
  }

  /** The runs and the names they show: a rename (meta.json's name) redraws the view too. */
  private runList(): string {
    return this.host.ctx.index
      .all()
      .map((r) => `${runKey(r)}\0${r.name ?? ''}\0${r.meta?.name ?? ''}`)
      .join('\n');
  }

  /** The name a run shows, as in the Runs view: meta.json's name, else the spec's, with the id's suffix when names repeat. */
  private runLabel(ref: RunRef): string {
    const siblings = this.host.ctx.index.byTarget().get(ref.targetId) ?? [];
    return displayNames(siblings).get(ref.runId) ?? this.record(ref)?.name ?? ref.runId;
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
    const v = this.host.monitor.view(ref);
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
    return this.host.ctx.index.all().find((r) => runKey(r) === key);
  }

  record(ref: RunRef): RunRecord | undefined {
    return this.host.ctx.index.get(ref.targetId, ref.runId);
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
    const def = this.host.ctx.target(ref.targetId);
    if (!record || !def) {
      into.error = def ? 'run not found (refresh the Runs view)' : `target ${ref.targetId} is not configured`;
      return;
    }
    try {
      into.info = await readRunCheckpoints(this.host.ctx.python(def), record.runDir, { timeoutMs: TIMEOUT_MS });
    } catch (e) {
      into.error = errorText(e);
      return;
    }
    const vkey = (file: string, sha: string | null) => `${runKey(ref)}\0${file}\0${sha ?? ''}`;
    const entries = into.info.checkpoints;
    if (entries.some((c) => !this.verified.has(vkey(c.file, c.sha256)))) {
      try {
        await this.host.ctx.ensureRunner(def);
        const results = new Map(
          (await verifyCheckpoints(this.host.ctx.transport(def), record.runDir, { timeoutMs: TIMEOUT_MS })).map((v) => [
            v.file,
            verifyProblem(v, vscode.l10n.t) ?? null,
          ]),
        );
        for (const c of entries)
          if (results.has(c.file)) this.verified.set(vkey(c.file, c.sha256), results.get(c.file)!);
      } catch (e) {
        // An older runner has no `verify`: list the checkpoints unverified rather than not at all.
        if (!this.verifyMissingLogged) this.host.ctx.log.warn(`checkpoint verify on ${def.label}: ${errorText(e)}`);
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
      const runs = this.host.ctx.index.all();
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
        return [{ kind: 'message', ...ref, text: vscode.l10n.t('Loading checkpoints…'), error: false }];
      }
      if (l.error) return [{ kind: 'message', ...ref, text: l.error, error: true }];
      const info = l.info!;
      const out: CkptNode[] = [];
      if (info.checkpoints.length) out.push({ kind: 'source', ...ref });
      else if (info.problems.length === 0)
        out.push({ kind: 'message', ...ref, text: vscode.l10n.t('No checkpoints yet'), error: false });
      for (const p of info.problems) out.push({ kind: 'problem', ...ref, label: p.label, message: p.message });
      for (const f of info.unlisted)
        out.push({
          kind: 'problem',
          ...ref,
          label: f,
          message: vscode.l10n.t('not in checkpoints.json (left by an interrupted save or prune?)'),
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
    const def = this.host.ctx.target(node.targetId);
    const where = def?.kind === 'ssh' ? 'ssh' : 'local';
    switch (node.kind) {
      case 'run': {
        const r = this.record(ref);
        const isSel = this.selected?.targetId === ref.targetId && this.selected.runId === ref.runId;
        const item = new vscode.TreeItem(
          this.runLabel(ref),
          isSel ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
        );
        item.id = `ckrun/${runKey(ref)}${isSel ? '/sel' : ''}`;
        const n = l?.info?.checkpoints.length;
        const count =
          n === undefined ? '' : n === 1 ? vscode.l10n.t('1 checkpoint') : vscode.l10n.t('{0} checkpoints', n);
        item.description = [def?.label ?? node.targetId, count].filter(Boolean).join(' · ');
        item.tooltip = r ? `${r.runId}\n${r.runDir}` : node.runId;
        item.iconPath = new vscode.ThemeIcon(def?.kind === 'ssh' ? 'remote' : 'history');
        item.contextValue = `checkpointRun.${where}`;
        return item;
      }
      case 'source': {
        const p = l?.info?.pretrained ?? null;
        const item = new vscode.TreeItem(
          p ? vscode.l10n.t('from {0}', path.posix.basename(p)) : vscode.l10n.t('from random initialization'),
          vscode.TreeItemCollapsibleState.Expanded,
        );
        item.id = `cksrc/${runKey(ref)}`;
        item.description = [l?.info?.backbone, l?.info?.freeze ? vscode.l10n.t('freeze {0}', l.info.freeze) : '']
          .filter(Boolean)
          .join(' · ');
        item.tooltip = sourceTooltip(p, runWeights(l?.info?.checkpoints ?? []));
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
        item.description = problem ? problem : c ? describeEntry(c, now, vscode.l10n.t) : '';
        item.iconPath = problem
          ? new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground'))
          : c?.best
            ? new vscode.ThemeIcon('star-full', new vscode.ThemeColor('charts.yellow'))
            : new vscode.ThemeIcon('database');
        item.tooltip = c ? checkpointTooltip(c, problem) : node.file;
        item.contextValue = `checkpoint.${where}.${c?.best ? 'best' : 'plain'}${problem ? '.bad' : ''}`;
        item.command = {
          command: 'ascend.checkpoints.openExplorer' satisfies CommandId,
          title: vscode.l10n.t('Open Checkpoint Explorer'),
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

/** Where the run's pretrained weights came from, as the newest checkpoint that recorded it says. */
export function runWeights(cs: readonly CheckpointDetail[]): CheckpointDetail['weights'] {
  return [...cs].sort((a, b) => b.order - a.order).find((c) => c.weights)?.weights ?? null;
}

/** The pretrained source's tooltip: the weights as the spec names them and the sha256 the runner loaded. */
export function sourceTooltip(pretrained: string | null, weights: CheckpointDetail['weights']): string {
  if (!pretrained) return vscode.l10n.t('No pretrained weights: the run started from random weights.');
  const lines = [vscode.l10n.t('Pretrained weights: {0}', pretrained)];
  if (weights && weights.source !== pretrained) lines.push(vscode.l10n.t('loaded from {0}', weights.source));
  if (weights?.firstSource) lines.push(vscode.l10n.t('a fine-tune of weights that began as {0}', weights.firstSource));
  lines.push(
    weights?.sha256
      ? `sha256 ${weights.sha256}`
      : vscode.l10n.t('sha256 not recorded (checkpoints of this run predate it, or none was saved yet)'),
  );
  return lines.join('\n');
}

/** A checkpoint's tooltip: what it is, how good, and the pretrained weights it grew from. */
export function checkpointTooltip(c: CheckpointDetail, problem: string | undefined): string {
  const lines = [c.file];
  if (problem) lines.push(`⚠ ${problem}`);
  if (c.best) lines.push(vscode.l10n.t('★ best validation accuracy'));
  if (c.epoch !== null || c.step !== null)
    lines.push(vscode.l10n.t('epoch {0}, step {1}', c.epoch ?? '?', c.step ?? '?'));
  if (c.valAcc !== null) lines.push(vscode.l10n.t('val acc {0}%', (c.valAcc * 100).toFixed(2)));
  if (c.valLoss !== null) lines.push(vscode.l10n.t('val loss {0}', c.valLoss));
  if (c.loss !== null) lines.push(vscode.l10n.t('loss {0}', c.loss));
  if (c.reason) lines.push(saveReason(c.reason, vscode.l10n.t));
  if (c.bytes !== null)
    lines.push(vscode.l10n.t('{0} ({1} bytes)', formatBytes(c.bytes), c.bytes.toLocaleString(vscode.env.language)));
  if (c.sha256) lines.push(`sha256 ${c.sha256}`);
  if (c.createdAt !== null)
    lines.push(vscode.l10n.t('saved {0}', new Date(c.createdAt * 1000).toLocaleString(vscode.env.language)));
  if (c.lastEval)
    lines.push(
      vscode.l10n.t(
        'last eval: {0} on {1}',
        c.lastEval.accuracy === null ? '?' : `${(c.lastEval.accuracy * 100).toFixed(2)}%`,
        c.lastEval.data,
      ),
    );
  if (c.weights)
    lines.push(
      c.weights.sha256
        ? vscode.l10n.t('weights from {0} (sha256 {1})', c.weights.source, c.weights.sha256)
        : vscode.l10n.t('weights from {0}', c.weights.source),
    );
  if (c.weights?.firstSource)
    lines.push(vscode.l10n.t('a fine-tune of weights that began as {0}', c.weights.firstSource));
  if (c.source === 'events') lines.push(vscode.l10n.t('(checkpoints.json unreadable: shown from the event log)'));
  return lines.join('\n');
}
