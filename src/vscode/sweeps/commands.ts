// The sweep commands: Start Sweep (a sweep spec file, or one made from a run spec or a run), Open
// Sweep (its panel), Stop Sweep, and Fine-tune from the Best Trial (the Start wizard with the best
// trial's spec and its best checkpoint as the pretrained weights, as Fine-tune from Checkpoint does).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { checkpointPath } from '../../core/checkpoints/client';
import { bestEntry } from '../../core/checkpoints/manifest';
import { readRunCheckpoints } from '../../core/checkpoints/runInfo';
import { stateWord } from '../../core/runs/presentation';
import { choicesFromSpec } from '../../core/spec/builder';
import { startSweep, stopSweep, sweepStatus } from '../../core/sweeps/client';
import { startSweepOnTarget } from '../../core/sweeps/remote';
import { sweepTemplate, SWEEP_FILE_GLOB, sweepFileBeside } from '../../core/sweeps/template';
import type { TargetDef } from '../../core/targets/model';
import type { App } from '../app';
import { specLanguage } from '../specLanguage';
import { startWizard } from '../startWizard';
import { SweepPanel, type SweepActions } from './panel';
import type { SweepRef } from './treeItem';

type Handler = (...args: unknown[]) => unknown;
type SweepCommandId =
  | 'ascend.startSweep'
  | 'ascend.startSweepFromRun'
  | 'ascend.openSweep'
  | 'ascend.stopSweep'
  | 'ascend.sweep.fineTuneFromBest';

const CREATE = 'create';
const START_OPTS = { timeoutMs: 120_000 };
// The Stop dialog's buttons, compared with the answer (translated).
const STOP = vscode.l10n.t('Stop');
const DRAIN = vscode.l10n.t('Drain');

function sweepRefOf(node: unknown): SweepRef | undefined {
  const n = node as Partial<SweepRef> | undefined;
  return n && typeof n.targetId === 'string' && typeof n.sweepId === 'string'
    ? { targetId: n.targetId, sweepId: n.sweepId }
    : undefined;
}

/** The sweep a command is about: the node it got, or one picked from the listed ones. */
async function resolveSweep(app: App, node: unknown, title: string, running = false): Promise<SweepRef | undefined> {
  const ref = sweepRefOf(node);
  if (ref) return ref;
  const items = app.ctx.targets.flatMap((t) =>
    app.runs.sweeps
      .summaries(t.id)
      .filter((s) => !running || s.state === 'running')
      .map((s) => ({
        label: s.name,
        description: `${stateWord(s.state, vscode.l10n.t)} · ${t.label}`,
        detail: s.sweep_id,
        ref: { targetId: t.id, sweepId: s.sweep_id },
      })),
  );
  if (!items.length) {
    void vscode.window.showInformationMessage(
      running ? vscode.l10n.t('No running sweeps.') : vscode.l10n.t('No sweeps listed (Refresh the Runs view).'),
    );
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { title }))?.ref;
}

function targetFor(app: App, ref: SweepRef): { def: TargetDef; dir: string } {
  const def = app.ctx.target(ref.targetId);
  if (!def) throw new Error(vscode.l10n.t('the target {0} is not configured any more', ref.targetId));
  const dir = app.runs.sweeps.get(ref.targetId, ref.sweepId)?.sweep_dir;
  if (!dir)
    throw new Error(vscode.l10n.t('sweep {0} is not listed on {1} (Refresh the Runs view)', ref.sweepId, def.label));
  return { def, dir };
}

/** Writes a sweep spec for `base` (a path relative to the new file) and opens it. */
async function writeSweepFile(file: vscode.Uri, base: string, name: string): Promise<void> {
  try {
    await vscode.workspace.fs.stat(file);
  } catch {
    await vscode.workspace.fs.writeFile(file, Buffer.from(sweepTemplate(base, name), 'utf8'));
  }
  await vscode.window.showTextDocument(file);
  void vscode.window.showInformationMessage(
    vscode.l10n.t(
      'Edit the search space, then run "Ascend: Start Sweep…" (or the editor title\'s beaker) on {0}.',
      path.basename(file.fsPath),
    ),
  );
}

async function createFromRunSpec(): Promise<void> {
  const specs = await vscode.workspace.findFiles('**/*.ascend.{yaml,yml,json}', '**/node_modules/**', 200);
  const picked = specs.length
    ? (
        await vscode.window.showQuickPick(
          specs.map((u) => ({ label: vscode.workspace.asRelativePath(u), uri: u })),
          { title: vscode.l10n.t('Make a sweep over which run spec?') },
        )
      )?.uri
    : (await vscode.window.showOpenDialog({ title: vscode.l10n.t('Make a sweep over which run spec?') }))?.[0];
  if (!picked) return;
  const out = vscode.Uri.file(sweepFileBeside(picked.fsPath));
  await writeSweepFile(out, `./${path.basename(picked.fsPath)}`, path.basename(out.fsPath).split('.')[0]);
}

async function start(app: App, arg: unknown): Promise<void> {
  let file = arg instanceof vscode.Uri ? arg : undefined;
  if (!file) {
    const found = await vscode.workspace.findFiles(SWEEP_FILE_GLOB, '**/node_modules/**', 200);
    const pick = await vscode.window.showQuickPick(
      [
        ...found.map((u) => ({ label: vscode.workspace.asRelativePath(u), uri: u as vscode.Uri | typeof CREATE })),
        {
          label: `$(new-file) ${vscode.l10n.t('Create a sweep spec from a run spec…')}`,
          uri: CREATE as vscode.Uri | typeof CREATE,
        },
      ],
      { title: vscode.l10n.t('Start which sweep?') },
    );
    if (!pick) return;
    if (pick.uri === CREATE) return createFromRunSpec();
    file = pick.uri;
  }
  if (!/\.ascend-sweep\.(ya?ml|json)$/.test(file.path)) {
    // A run spec: make its sweep spec first.
    if (/\.ascend\.(ya?ml|json)$/.test(file.path)) {
      const out = vscode.Uri.file(sweepFileBeside(file.fsPath));
      return writeSweepFile(out, `./${path.basename(file.fsPath)}`, path.basename(out.fsPath).split('.')[0]);
    }
    throw new Error(vscode.l10n.t('{0} is not a sweep spec (*.ascend-sweep.yaml)', path.basename(file.fsPath)));
  }
  await vscode.workspace.textDocuments.find((d) => d.uri.toString() === file!.toString())?.save();
  const def = specLanguage(app).targetOf(file) ?? app.ctx.target('local');
  if (!def) throw new Error(vscode.l10n.t('no target for the sweep: add this machine or an SSH target'));
  await app.ctx.ensureRunner(def);
  const started = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: vscode.l10n.t('Ascend: starting sweep {0} on {1}…', path.basename(file.fsPath), def.label),
    },
    async () => {
      if (def.kind === 'local') return startSweep(app.ctx.transport(def), file!.fsPath, def.runsRoot, START_OPTS);
      // An SSH target: the sweep spec (its base inline) is copied there first (src/core/sweeps/remote.ts).
      const sent = await startSweepOnTarget(
        app.ctx.transport(def),
        app.ctx.python(def),
        file!.fsPath,
        def.runsRoot,
        START_OPTS,
      );
      app.ctx.log.info(`sweep spec ${path.basename(file!.fsPath)} copied to ${sent.specPath} on ${def.label}`);
      return sent.started;
    },
  );
  app.ctx.log.info(`sweep ${started.sweep_id} on ${def.label}: ${started.sweep_dir} (pid ${started.pid})`);
  await vscode.commands.executeCommand('ascend.refresh');
  void vscode.commands.executeCommand('ascend.runs.focus');
  SweepPanel.show(app, { targetId: def.id, sweepId: started.sweep_id }, actions(app));
}

/**
 * "Start Sweep from This Run…": a sweep spec in the workspace whose base is the run's resolved spec.
 * A run on an SSH target names its spec.json there (read by the target when the sweep starts), and
 * the new file is that target's, so Start Sweep sends it there.
 */
async function fromRun(app: App, node: unknown): Promise<void> {
  const n = node as { targetId?: unknown; runId?: unknown } | undefined;
  const record =
    n && typeof n.targetId === 'string' && typeof n.runId === 'string'
      ? app.ctx.index.get(n.targetId, n.runId)
      : undefined;
  if (!record) throw new Error(vscode.l10n.t('choose a run in the Runs view'));
  const def = app.ctx.target(record.targetId);
  if (!def) throw new Error(vscode.l10n.t('the target {0} is not configured any more', record.targetId));
  const folder =
    vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ??
    (def.kind === 'local' ? path.dirname(record.runDir) : undefined);
  if (!folder) throw new Error(vscode.l10n.t('open a folder first: the sweep spec is written in the workspace'));
  const name = `${(record.meta?.name ?? record.name ?? 'run').replace(/[^\w.-]+/g, '-')}-sweep`;
  const out = vscode.Uri.file(path.join(folder, `${name}.ascend-sweep.yaml`));
  // The run's resolved spec (absolute paths) is the base; the sweep sets name and devices itself.
  const base =
    def.kind === 'local' ? path.join(record.runDir, 'spec.json') : path.posix.join(record.runDir, 'spec.json');
  if (def.kind !== 'local') await specLanguage(app).rememberTarget(out, def);
  await writeSweepFile(out, base, name);
}

function actions(app: App): SweepActions {
  return {
    fineTuneBest: (ref) => fineTuneBest(app, ref),
    stop: (ref) => stop(app, ref),
  };
}

async function stop(app: App, ref: SweepRef): Promise<void> {
  const { def, dir } = targetFor(app, ref);
  const how = await vscode.window.showWarningMessage(
    vscode.l10n.t('Stop sweep {0}?', app.runs.sweeps.get(ref.targetId, ref.sweepId)?.name ?? ref.sweepId),
    {
      modal: true,
      detail: vscode.l10n.t(
        'Stop ends its running trials now (they run again when the sweep is resumed); Drain starts no new trial and lets the running ones finish.',
      ),
    },
    STOP,
    DRAIN,
  );
  if (!how) return;
  await app.ctx.ensureRunner(def);
  const res = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Ascend: stopping the sweep…') },
    () => stopSweep(app.ctx.transport(def), dir, { drain: how === DRAIN, timeoutS: 120, timeoutMs: 180_000 }),
  );
  app.ctx.log.info(`sweep-stop ${ref.sweepId}: ${JSON.stringify(res)}`);
  if (!res.handled)
    void vscode.window.showWarningMessage(vscode.l10n.t('The sweep has not ended yet (state {0}).', res.state));
  await vscode.commands.executeCommand('ascend.refresh');
}

async function fineTuneBest(app: App, ref: SweepRef): Promise<void> {
  const { def, dir } = targetFor(app, ref);
  await app.ctx.ensureRunner(def);
  const status = await sweepStatus(app.ctx.transport(def), dir, { timeoutMs: 60_000 });
  if (!status.best?.run_dir) throw new Error(vscode.l10n.t('no trial of this sweep has completed yet'));
  const info = await readRunCheckpoints(app.ctx.python(def), status.best.run_dir, { timeoutMs: 60_000 });
  const best = bestEntry(info.checkpoints);
  if (!best) throw new Error(vscode.l10n.t("trial {0}'s run has no best checkpoint", status.best.number));
  const abs = checkpointPath(status.best.run_dir, best.file);
  const spec = info.spec ?? {};
  // As Fine-tune from Checkpoint: the trial's spec (its swept values) with its best checkpoint as the weights.
  await startWizard(app, {
    targetId: def.id,
    choices: { ...choicesFromSpec(spec), pretrained: abs, name: `${status.name}-best-ft` },
    baseSpec: { ...spec, model: { ...(spec.model as object), pretrained: abs } },
  });
}

export const SWEEP_COMMAND_FACTORIES: Record<SweepCommandId, (app: App) => Handler> = {
  'ascend.startSweep': (app) => (arg) => start(app, arg),
  'ascend.startSweepFromRun': (app) => (node) => fromRun(app, node),
  'ascend.openSweep': (app) => async (node) => {
    const ref = await resolveSweep(app, node, vscode.l10n.t('Open which sweep?'));
    if (ref) SweepPanel.show(app, ref, actions(app));
  },
  'ascend.stopSweep': (app) => async (node) => {
    const ref = await resolveSweep(app, node, vscode.l10n.t('Stop which sweep?'), true);
    if (ref) await stop(app, ref);
  },
  'ascend.sweep.fineTuneFromBest': (app) => async (node) => {
    const ref = await resolveSweep(app, node, vscode.l10n.t('Fine-tune from the best trial of which sweep?'));
    if (ref) await fineTuneBest(app, ref);
  },
};
