// The Checkpoints commands and the explorer's host side: the tree's menus and the palette call
// these handlers, which run the actions (actions.ts) or open the checkpoint explorer
// (explorer.ts). Their dependencies come in a CheckpointsHost, built once from the App and the view.
import * as vscode from 'vscode';
import { fetchThumbs, inspectCheckpoint } from '../../core/checkpoints/client';
import { isLive } from '../../core/runs/presentation';
import type { CommandId } from '../../shared/commands';
import type { App } from '../app';
import { launchSpec } from '../launch';
import type { RunRef } from '../runMonitor';
import { runDisplayName } from '../runs';
import { startWizard } from '../startWizard';
import {
  compare,
  copyPath,
  deleteSome,
  download,
  evaluate,
  exportTo,
  fineTuneFrom,
  pickCheckpoint,
  prune,
  resolve,
  resumeFrom,
  reveal,
  type ActionsHost,
} from './actions';
import { CheckpointExplorer, type ExplorerHost } from './explorer';
import { classifyCommand } from '../preview/commands';
import { LONG_TIMEOUT_MS, TIMEOUT_MS, type CkptRef } from './types';

/** What the commands need: the actions' host, and where the extension's files are (the explorer's page). */
export interface CheckpointsHost extends ActionsHost {
  extensionUri: vscode.Uri;
}

/** The commands' dependencies, from the App and the Checkpoints view. */
export function checkpointsHost(app: App, view: ActionsHost['view']): CheckpointsHost {
  return {
    ctx: app.ctx,
    view,
    isLive: (record) => isLive(app.runs.state(record)),
    launch: (def, spec, report, opts) => launchSpec(app, def, spec, report, opts),
    fineTune: (start) => startWizard(app, start),
    extensionUri: app.ctx.extension.extensionUri,
  };
}

/** The ids of the checkpoint commands (src/shared/commands.ts): each has a handler below. */
export type CheckpointCommandId = Extract<CommandId, `ascend.checkpoint.${string}` | `ascend.checkpoints.${string}`>;

type Handler = (...args: unknown[]) => unknown;

const explorerHost = (host: CheckpointsHost): ExplorerHost => ({
  view: host.view,
  targetLabel: (id) => host.ctx.target(id)?.label ?? id,
  displayName: (ref) => runDisplayName(host.ctx, ref),
  isSsh: (id) => host.ctx.target(id)?.kind === 'ssh',
  isLive: (ref) => {
    const r = host.ctx.index.get(ref.targetId, ref.runId);
    return r ? host.isLive(r) : false;
  },
  inspect: async (ref) => {
    const r = await resolve(host, ref);
    await host.ctx.ensureRunner(r.def);
    return inspectCheckpoint(host.ctx.transport(r.def), r.abs, r.record.runDir, { timeoutMs: LONG_TIMEOUT_MS });
  },
  evaluate: (ref, data) => evaluate(host, ref, data),
  thumbs: async (ref, root, files) => {
    const r = await resolve(host, ref);
    await host.ctx.ensureRunner(r.def);
    // Through the target's runner: the local machine's Python, or ssh with the argv quoted for the login shell.
    return fetchThumbs(host.ctx.transport(r.def), root, files, { timeoutMs: TIMEOUT_MS });
  },
  exportTo: (ref, format) => exportTo(host, ref, format),
  compare: (a, b) => compare(host, a, b),
  action: async (action, ref) => {
    const f = {
      resume: resumeFrom,
      fineTune: fineTuneFrom,
      classify: (_: ActionsHost, x: CkptRef) => classifyCommand(host, x, undefined),
      download,
      reveal,
      copyPath,
      delete: (h: ActionsHost, x: CkptRef) => deleteSome(h, [x]),
    }[action];
    await f(host, ref);
  },
  prune: (run, n) => prune(host, run, n),
  log: (m) => host.ctx.log.warn(m),
  extensionUri: host.extensionUri,
});

function explorerFor(host: CheckpointsHost, run: RunRef): CheckpointExplorer {
  return CheckpointExplorer.show(explorerHost(host), run);
}

/** The checkpoint commands; registerCommands (src/vscode/commands.ts) registers them with the rest. */
export const CHECKPOINT_COMMAND_FACTORIES = {
  'ascend.checkpoints.refresh': (host: CheckpointsHost) => (node: unknown) =>
    host.view.refresh(isRunRef(node) ? node : undefined, true),
  'ascend.checkpoints.openExplorer': (host: CheckpointsHost) => async (node: unknown) => {
    let run: RunRef | undefined = isRunRef(node) ? { targetId: node.targetId, runId: node.runId } : undefined;
    if (!run) {
      const picked = await pickCheckpoint(host, vscode.l10n.t('Open the checkpoint explorer of…'));
      if (!picked) return;
      run = picked;
      node = picked;
    }
    const ex = explorerFor(host, run);
    if (isCkptNode(node)) void ex.select(node.file);
  },
  'ascend.checkpoint.evaluate': (host: CheckpointsHost) => async (node: unknown, nodes: unknown) => {
    const [ref] = await refsOf(host, node, nodes, vscode.l10n.t('Evaluate which checkpoint?'));
    if (ref) await explorerFor(host, ref).evaluate(ref.file);
  },
  'ascend.checkpoint.exportMindir': (host: CheckpointsHost) => async (node: unknown, nodes: unknown) => {
    for (const ref of await refsOf(host, node, nodes, vscode.l10n.t('Export which checkpoint to MindIR?')))
      await exportTo(host, ref, 'mindir');
  },
  'ascend.checkpoint.exportOnnx': (host: CheckpointsHost) => async (node: unknown, nodes: unknown) => {
    for (const ref of await refsOf(host, node, nodes, vscode.l10n.t('Export which checkpoint to ONNX?')))
      await exportTo(host, ref, 'onnx');
  },
  'ascend.checkpoint.resume': (host: CheckpointsHost) => async (node: unknown) => {
    const [ref] = await refsOf(host, node, undefined, vscode.l10n.t('Resume from which checkpoint?'));
    if (ref) await resumeFrom(host, ref);
  },
  'ascend.checkpoint.fineTuneFrom': (host: CheckpointsHost) => async (node: unknown) => {
    const [ref] = await refsOf(host, node, undefined, vscode.l10n.t('Fine-tune from which checkpoint?'));
    if (ref) await fineTuneFrom(host, ref);
  },
  'ascend.checkpoint.compare': (host: CheckpointsHost) => async (node: unknown, nodes: unknown) => {
    const refs = await refsOf(host, node, nodes, vscode.l10n.t('Compare which checkpoint?'));
    if (refs.length > 2) throw new Error(vscode.l10n.t('select two checkpoints to compare'));
    if (refs.length) await explorerFor(host, refs[0]).compare(refs[0].file, refs[1]);
  },
  'ascend.checkpoint.download': (host: CheckpointsHost) => async (node: unknown, nodes: unknown) => {
    for (const ref of await refsOf(host, node, nodes, vscode.l10n.t('Download which checkpoint?')))
      await download(host, ref);
  },
  'ascend.checkpoint.reveal': (host: CheckpointsHost) => async (node: unknown) => {
    const [ref] = await refsOf(host, node, undefined, vscode.l10n.t('Reveal which checkpoint?'));
    if (ref) await reveal(host, ref);
  },
  'ascend.checkpoint.copyPath': (host: CheckpointsHost) => async (node: unknown) => {
    const [ref] = await refsOf(host, node, undefined, vscode.l10n.t('Copy the path of which checkpoint?'));
    if (ref) await copyPath(host, ref);
  },
  'ascend.checkpoint.delete': (host: CheckpointsHost) => async (node: unknown, nodes: unknown) => {
    const refs = await refsOf(host, node, nodes, vscode.l10n.t('Delete which checkpoint?'));
    if (refs.length) await deleteSome(host, refs);
  },
  'ascend.checkpoints.prune': (host: CheckpointsHost) => async (node: unknown) => {
    let run: RunRef | undefined = isRunRef(node) ? node : undefined;
    if (!run) {
      const items = host.ctx.index.all().map((r) => ({ label: r.name ?? r.runId, description: r.runId, r }));
      run = (await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Prune the checkpoints of which run?') }))
        ?.r;
    }
    if (run) await prune(host, { targetId: run.targetId, runId: run.runId });
  },
  'ascend.checkpoint.classify': (host: CheckpointsHost) => (node: unknown, nodes: unknown) =>
    classifyCommand(host, node, nodes),
} satisfies Record<CheckpointCommandId, (host: CheckpointsHost) => Handler>;

export function isCheckpointCommand(id: CommandId): id is CheckpointCommandId {
  return Object.hasOwn(CHECKPOINT_COMMAND_FACTORIES, id);
}

// ---- which checkpoints a command is about ----

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
async function refsOf(host: CheckpointsHost, node: unknown, nodes: unknown, title: string): Promise<CkptRef[]> {
  const many = Array.isArray(nodes) ? nodes.filter(isCkptNode) : [];
  if (many.length) return many.map(({ targetId, runId, file }) => ({ targetId, runId, file }));
  if (isCkptNode(node)) return [{ targetId: node.targetId, runId: node.runId, file: node.file }];
  const one = await pickCheckpoint(host, title, isRunRef(node) ? node : undefined);
  return one ? [one] : [];
}
