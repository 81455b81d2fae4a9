// Command handlers as factories `(app) => handler`, one per id of src/shared/commands.ts that is
// not a checkpoint command (those are in checkpoints/commands.ts): the Record types make a missing
// or misspelled command a compile error. About 500 lines because it is one table of small
// handlers: splitting it by letter would hide the one place that lists them.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunRecord } from '../core/runs/runIndex';
import {
  controlRun,
  RunnerError,
  runnerArgs,
  runRunner,
  setRunMeta,
  type ControlAction,
  type MetaChange,
} from '../core/targets/runnerCli';
import { metaRefusal, tagChange, tagsText } from '../core/runs/meta';
import { runnerErrorSentence } from '../core/runs/notices';
import { describeListed, isLive, type ListedRunDetail } from '../core/runs/presentation';
import { absolutizeSpecPaths, choicesFromSpec } from '../core/spec/builder';
import { parseSpecText, SPEC_EXTENSIONS } from '../core/spec/file';
import { deleteRunDir } from '../core/targets/ops';
import { targetsToList, type SshTargetSetting, type TargetDef } from '../core/targets/model';
import { COMMANDS, VIEWS, type CommandId } from '../shared/commands';
import type { App } from './app';
import {
  CHECKPOINT_COMMAND_FACTORIES,
  checkpointsHost,
  isCheckpointCommand,
  type CheckpointCommandId,
} from './checkpoints/commands';
import type { CheckpointsView } from './checkpoints/view';
import { openConsole, openLogin } from './console';
import { copyWeightsCommand } from './copyWeights';
import { installMindcvCommand } from './installMindcv';
import { errorText } from './context';
import { translate } from './l10n';
import { registerDashboards } from './dashboardPanel';
import type { RunRef } from './runMonitor';
import { runDisplayName } from './runs';
import { saveSshTargets } from './settings';
import { specLanguage } from './specLanguage';
import { startWizard } from './startWizard';
import { previewDataCommand } from './preview/commands';
import { openRunsTableCommand } from './runsTable/panel';
import { createPythonEnv, openTargetSettings, setPythonPath } from './wizard/health';
import { startShortPath } from './wizard/short';
import { refreshSweeps } from './sweeps/listing';
import { SWEEP_COMMAND_FACTORIES } from './sweeps/commands';

type Handler = (...args: unknown[]) => unknown;

export const COMMAND_FACTORIES: Record<Exclude<CommandId, CheckpointCommandId>, (app: App) => Handler> = {
  ...SWEEP_COMMAND_FACTORIES, // src/vscode/sweeps/commands.ts
  'ascend.startFineTune': (app) => (node) => startShortPath(app, { targetId: targetIdOf(node) }),
  'ascend.startFromSpec': (app) => async (uri) => {
    const file =
      uri instanceof vscode.Uri
        ? uri
        : (
            await vscode.window.showOpenDialog({
              filters: { 'Ascend run spec': [...SPEC_EXTENSIONS] },
              title: vscode.l10n.t('Start from a run spec'),
            })
          )?.[0];
    if (!file) return;
    let spec: unknown;
    try {
      // YAML becomes JSON here. Relative paths are the file's own (the runner reads them from its
      // folder); the wizard launches a copy.
      const text = Buffer.from(await vscode.workspace.fs.readFile(file)).toString('utf8');
      spec = absolutizeSpecPaths(parseSpecText(text, file.path), path.dirname(file.fsPath), path.join);
    } catch (e) {
      void vscode.window.showErrorMessage(`${vscode.workspace.asRelativePath(file)}: ${errorText(e)}`);
      return;
    }
    // The wizard starts on the file's target, so its paths (data, pretrained) are kept unless
    // another target is picked; they are that machine's paths.
    await startWizard(app, {
      targetId: specLanguage(app).targetOf(file)?.id,
      choices: choicesFromSpec(spec),
      baseSpec: spec,
    });
  },
  'ascend.stopRun': (app) => (node) => control(app, node, 'stop'),
  'ascend.saveCheckpoint': (app) => (node) => control(app, node, 'checkpoint'),
  'ascend.openConsole': (app) => async (node) => {
    const found = await resolveRun(app, node, vscode.l10n.t('Open the console of which run?'));
    if (found) openConsole(app.ctx, found.def, found.record);
  },
  'ascend.openDashboard': (app) => async (node) => {
    const found = await resolveRun(app, node, vscode.l10n.t('Open the dashboard of which run?'));
    if (found) registerDashboards(app).open([found.record]);
  },
  'ascend.compareRuns': (app) => async (node, selected) => {
    // from the Runs view with several runs selected: (clicked node, all selected nodes)
    let refs = (Array.isArray(selected) ? selected : [node]).filter(
      (n): n is RunRef => typeof (n as RunRef)?.targetId === 'string' && typeof (n as RunRef)?.runId === 'string',
    );
    if (refs.length < 2) {
      const items = app.ctx.index.all().map((r) => ({
        label: runDisplayName(app.ctx, r),
        description: `${app.runs.state(r)} · ${app.ctx.target(r.targetId)?.label ?? r.targetId}`,
        detail: r.runId,
        picked: refs.some((x) => x.targetId === r.targetId && x.runId === r.runId),
        ref: { targetId: r.targetId, runId: r.runId },
      }));
      if (items.length < 2) {
        void vscode.window.showInformationMessage(vscode.l10n.t('Compare needs at least two Ascend runs.'));
        return;
      }
      const picked = await vscode.window.showQuickPick(items, {
        title: vscode.l10n.t('Compare which runs?'),
        canPickMany: true,
      });
      if (!picked) return;
      refs = picked.map((p) => p.ref);
    }
    registerDashboards(app).open(refs);
  },
  'ascend.openRunsTable': (app) => (node) => openRunsTableCommand(app, node),
  'ascend.reattach': (app) => async (node) => {
    const found = await resolveRun(app, node, vscode.l10n.t('Reattach to which run?'));
    if (!found) return;
    app.monitor.follow(found.record, { restart: true });
    app.runs.refresh();
  },
  'ascend.deleteRun': (app) => async (node) => {
    const found = await resolveRun(app, node, vscode.l10n.t('Delete which run?'), (r) => app.runs.deletable(r));
    if (!found) return;
    const { def, record } = found;
    if (!app.runs.deletable(record)) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t('Run "{0}" is still running or streaming: stop it first.', record.name ?? record.runId),
      );
      return;
    }
    // A multi-node run has a run directory on each node: all of them go.
    const parts = [{ def, runDir: record.runDir }];
    for (const n of record.nodes ?? []) {
      const nodeDef = app.ctx.target(n.targetId);
      if (nodeDef) parts.push({ def: nodeDef, runDir: n.runDir });
    }
    const where = parts.map((p) => `${p.runDir} on ${p.def.label}`).join('\n');
    const yes = await vscode.window.showWarningMessage(
      vscode.l10n.t('Delete run "{0}" on {1}?', record.name ?? record.runId, def.label),
      {
        modal: true,
        detail: vscode.l10n.t('This deletes, with its checkpoints and logs:\n{0}\nIt cannot be undone.', where),
      },
      vscode.l10n.t('Delete'),
    );
    if (yes !== vscode.l10n.t('Delete')) return;
    for (const p of parts) {
      try {
        await deleteRunDir(app.ctx.python(p.def), p.runDir, { timeoutMs: 120_000 });
        app.ctx.log.info(`deleted ${p.runDir} on ${p.def.label}`);
      } catch (e) {
        // A folder that is already gone is what was asked for.
        if (!(e instanceof RunnerError && e.info?.kind === 'not_a_run')) {
          void vscode.window.showErrorMessage(
            vscode.l10n.t('Could not delete {0} on {1}: {2}', p.runDir, p.def.label, errorText(e)),
          );
          return;
        }
      }
    }
    await app.ctx.index.remove(record.targetId, record.runId);
    app.runs.refresh();
  },
  'ascend.renameRun': (app) => async (node) => {
    const found = await resolveRun(app, node, vscode.l10n.t('Rename which run?'));
    if (!found) return;
    const { record } = found;
    const name = await vscode.window.showInputBox({
      title: vscode.l10n.t('Rename Run: {0}', runDisplayName(app.ctx, record)),
      prompt: vscode.l10n.t(
        "The name shown for {0} (empty: the spec's name{1})",
        record.runId,
        record.name ? `, "${record.name}"` : '',
      ),
      value: record.meta?.name ?? '',
    });
    if (name === undefined) return;
    await changeMeta(app, found, { name: name.trim() });
  },
  'ascend.editRunNotes': (app) => async (node) => {
    const found = await resolveRun(app, node, vscode.l10n.t('Edit the notes of which run?'));
    if (!found) return;
    const notes = await vscode.window.showInputBox({
      title: vscode.l10n.t('Run Notes: {0}', runDisplayName(app.ctx, found.record)),
      prompt: vscode.l10n.t(
        'Free text about this run (shown in its tooltip, its dashboards and the checkpoint explorer)',
      ),
      value: found.record.meta?.notes ?? '',
    });
    if (notes === undefined) return;
    await changeMeta(app, found, { notes });
  },
  'ascend.tagRun': (app) => async (node) => {
    const found = await resolveRun(app, node, vscode.l10n.t('Tag which run?'));
    if (!found) return;
    const typed = await vscode.window.showInputBox({
      title: vscode.l10n.t('Tag Run: {0}', runDisplayName(app.ctx, found.record)),
      prompt: vscode.l10n.t('Tags, separated by commas or spaces (remove one to untag it)'),
      value: tagsText(found.record.meta),
    });
    if (typed === undefined) return;
    const change = tagChange(found.record.meta?.tags ?? [], typed);
    if (!change.tag?.length && !change.untag?.length) return;
    await changeMeta(app, found, change);
  },
  'ascend.refresh': (app) => () => {
    app.ctx.reloadTargets();
    return listRuns(app);
  },
  'ascend.checkTarget': (app) => async (node) => {
    const def = targetOf(app, node) ?? (await pickTarget(app, vscode.l10n.t('Check which target?')));
    if (def) await app.targets.check(def);
  },
  'ascend.addSshTarget': (app) => async () => {
    const listed = new Set(app.ctx.settings.sshTargets.map((t) => t.host));
    const fromConfig = app.ctx.targets
      .filter((t) => t.source === 'sshConfig')
      .map((t) => ({ label: t.label, description: t.description }));
    const enter = {
      label: vscode.l10n.t('$(edit) Enter a host…'),
      description: vscode.l10n.t('user@host, or an alias'),
    };
    const picked = fromConfig.length
      ? await vscode.window.showQuickPick([enter, ...fromConfig], {
          title: vscode.l10n.t('Add SSH Target'),
          placeHolder: vscode.l10n.t('A host from ~/.ssh/config, or enter one'),
        })
      : enter;
    if (!picked) return;
    let host =
      picked === enter
        ? await vscode.window.showInputBox({
            title: vscode.l10n.t('Add SSH Target'),
            prompt: vscode.l10n.t('Host name or ~/.ssh/config alias (user@host also works)'),
            validateInput: (v) =>
              /^\s*$|\s/.test(v) || v.startsWith('-') ? 'one host, no spaces, not starting with -' : undefined,
          })
        : picked.label;
    if (!host) return;
    const entry: SshTargetSetting = { host };
    const at = host.lastIndexOf('@');
    if (at > 0) {
      entry.user = host.slice(0, at);
      entry.host = host = host.slice(at + 1);
    }
    if (listed.has(host)) {
      void vscode.window.showInformationMessage(vscode.l10n.t('{0} is already a target.', host));
      return;
    }
    const python = await vscode.window.showInputBox({
      title: vscode.l10n.t('Add SSH Target: {0}', host),
      prompt: vscode.l10n.t('Python with MindSpore on that host'),
      value: app.ctx.settings.remote.python,
    });
    if (python === undefined) return;
    const setup = await vscode.window.showInputBox({
      title: vscode.l10n.t('Add SSH Target: {0}', host),
      prompt: vscode.l10n.t(
        'Set-up line run first (optional), e.g. source /usr/local/Ascend/ascend-toolkit/set_env.sh',
      ),
      value: app.ctx.settings.remote.setup ?? '',
    });
    if (setup === undefined) return;
    if (python.trim()) entry.python = python.trim();
    if (setup.trim()) entry.setup = setup.trim();
    await saveSshTargets([...app.ctx.settings.sshTargets, entry]);
    app.ctx.reloadTargets();
    const def = app.ctx.target(`ssh:${host}`);
    if (def) void app.targets.check(def);
  },
  'ascend.removeTarget': (app) => async (node) => {
    const def =
      targetOf(app, node) ??
      (await pickTarget(app, vscode.l10n.t('Remove which target?'), (t) => t.source === 'settings'));
    if (!def) return;
    if (def.source !== 'settings') {
      void vscode.window.showInformationMessage(
        def.kind === 'local'
          ? vscode.l10n.t('This machine is always a target.')
          : vscode.l10n.t(
              '{0} comes from ~/.ssh/config; remove it there, or turn off ascendFinetune.readSshConfig.',
              def.label,
            ),
      );
      return;
    }
    const yes = await vscode.window.showWarningMessage(
      vscode.l10n.t('Remove the target {0}?', def.label),
      { modal: true, detail: vscode.l10n.t('Its runs keep going on the host; they are no longer listed here.') },
      vscode.l10n.t('Remove'),
    );
    if (yes !== vscode.l10n.t('Remove')) return;
    await saveSshTargets(app.ctx.settings.sshTargets.filter((t) => t.host !== def.label));
    app.ctx.reloadTargets();
  },
  'ascend.sshLogin': (app) => async (node) => {
    const def =
      targetOf(app, node) ??
      (await pickTarget(app, vscode.l10n.t('Log in to which SSH target?'), (t) => t.kind === 'ssh'));
    if (!def) return;
    if (def.kind !== 'ssh') {
      void vscode.window.showInformationMessage(vscode.l10n.t('This machine needs no login.'));
      return;
    }
    openLogin(app.ctx, def);
  },
  'ascend.showLog': (app) => () => app.ctx.log.show(),
  'ascend.copyWeightsToTarget': (app) => (node) => copyWeightsCommand(app, node),
  'ascend.installMindcv': (app) => (node) => installMindcvCommand(app, node),
  'ascend.setPythonPath': (app) => () => setPythonPath(app),
  'ascend.createPythonEnv': (app) => () => createPythonEnv(app),
  'ascend.openTargetSettings': () => (arg) => openTargetSettings(arg),
  // The spec language (its language server starts with these, once per extension lifetime).
  'ascend.newRunSpec': (app) => () => specLanguage(app).newRunSpec(),
  'ascend.startSpecFile': (app) => {
    const lang = specLanguage(app);
    return (uri, opts) => lang.start(uri, opts);
  },
  'ascend.openLastRun': (app) => (ref) => specLanguage(app).openLastRun(ref),
  'ascend.previewData': (app) => (arg) => previewDataCommand(app, arg),
};

export function registerCommands(app: App, checkpoints: CheckpointsView): void {
  registerDashboards(app); // its serializer reopens dashboards after a reload
  const cp = checkpointsHost(app, checkpoints);
  for (const { id } of COMMANDS) {
    const handler = isCheckpointCommand(id) ? CHECKPOINT_COMMAND_FACTORIES[id](cp) : COMMAND_FACTORIES[id](app);
    app.ctx.register(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await handler(...args);
        } catch (e) {
          app.ctx.log.error(`${id}: ${errorText(e)}`);
          void vscode.window.showErrorMessage(vscode.l10n.t('Ascend: {0}', errorText(e)));
        }
      }),
    );
  }
}

/** Lists the runs of this machine, the settings' hosts and hosts with known runs; re-attaches to the live ones. */
export async function listRuns(app: App): Promise<void> {
  const { ctx } = app;
  const targets = targetsToList(ctx.targets, ctx.index.byTarget().keys());
  await Promise.all(
    targets.map(async (def) => {
      try {
        await ctx.ensureRunner(def);
        const out = await runRunner<{ runs?: ListedRunDetail[]; skipped?: unknown[] }>(
          ctx.transport(def),
          runnerArgs.ls(def.runsRoot),
          {
            timeoutMs: 60_000,
          },
        );
        const listed = Array.isArray(out.runs) ? out.runs : [];
        // What runRunner left out or dropped (a run without an id, a field of the wrong type): logged, never fatal.
        for (const w of Array.isArray(out.skipped) ? out.skipped : []) ctx.log.warn(`ls on ${def.label}: ${String(w)}`);
        for (const l of listed)
          if (typeof l.problem === 'string' && l.problem)
            ctx.log.warn(`ls on ${def.label}: bad run ${l.run_id}: ${l.problem}`);
        await ctx.index.mergeListing(def.id, listed);
        await refreshSweeps(app, def); // sweeps become parent rows of their trials
        // Runs that are not streaming take ls's progress; live ones get theirs from the stream.
        for (const l of listed) {
          const r = ctx.index.get(def.id, l.run_id);
          const description = describeListed(l, translate);
          if (r && description && !app.monitor.isFollowing(r))
            await ctx.index.progress(def.id, l.run_id, r.lastSeq, description);
        }
        ctx.log.info(`ls on ${def.label}: ${listed.length} runs in ${def.runsRoot}`);
      } catch (e) {
        ctx.log.warn(`ls on ${def.label} failed (its runs keep their last known state): ${errorText(e)}`);
      }
    }),
  );
  for (const r of ctx.index.live()) if (ctx.target(r.targetId)) app.monitor.follow(r);
  app.runs.refresh();
}

function targetIdOf(node: unknown): string | undefined {
  if (typeof node !== 'object' || node === null) return undefined;
  const n = node as { targetId?: unknown };
  return typeof n.targetId === 'string' ? n.targetId : undefined;
}

function targetOf(app: App, node: unknown): TargetDef | undefined {
  const id = targetIdOf(node);
  return id === undefined ? undefined : app.ctx.target(id);
}

async function pickTarget(
  app: App,
  title: string,
  filter: (t: TargetDef) => boolean = () => true,
): Promise<TargetDef | undefined> {
  const items = app.ctx.targets.filter(filter).map((t) => ({ label: t.label, description: t.description, def: t }));
  if (items.length === 0) return undefined;
  return (await vscode.window.showQuickPick(items, { title }))?.def;
}

/** The run a command is about: the tree node or RunRef it got, or one picked from the index. */
async function resolveRun(
  app: App,
  node: unknown,
  title: string,
  filter: (r: RunRecord) => boolean = () => true,
): Promise<{ def: TargetDef; record: RunRecord } | undefined> {
  let record: RunRecord | undefined;
  const n = node as Partial<RunRef> | undefined;
  if (n && typeof n.targetId === 'string' && typeof n.runId === 'string')
    record = app.ctx.index.get(n.targetId, n.runId);
  if (!record) {
    const items = app.ctx.index
      .all()
      .filter(filter)
      .map((r) => ({
        label: runDisplayName(app.ctx, r),
        description: `${app.runs.state(r)} · ${app.ctx.target(r.targetId)?.label ?? r.targetId}`,
        detail: r.runId,
        record: r,
      }));
    if (items.length === 0) {
      void vscode.window.showInformationMessage(vscode.l10n.t('No matching Ascend runs.'));
      return undefined;
    }
    record = (await vscode.window.showQuickPick(items, { title }))?.record;
    if (!record) return undefined;
  }
  const def = app.ctx.target(record.targetId);
  if (!def) {
    void vscode.window.showErrorMessage(
      vscode.l10n.t('The target of run {0} ({1}) is not configured any more.', record.runId, record.targetId),
    );
    return undefined;
  }
  return { def, record };
}

/** A `meta` change on the run's target; the Runs view, dashboards and tooltips take the answer. */
async function changeMeta(app: App, found: { def: TargetDef; record: RunRecord }, change: MetaChange): Promise<void> {
  const { def, record } = found;
  try {
    await app.ctx.ensureRunner(def);
    const meta = await setRunMeta(app.ctx.transport(def), record.runDir, change, { timeoutMs: 60_000 });
    await app.ctx.index.annotate(record.targetId, record.runId, { meta });
    app.ctx.log.info(`meta ${record.runId} on ${def.label}: ${JSON.stringify(meta)}`);
    app.runs.refresh();
    app.monitor.renamed();
  } catch (e) {
    const info = e instanceof RunnerError ? e.info : undefined;
    const why =
      metaRefusal(info, { t: translate, language: vscode.env.language }) ??
      (info ? runnerErrorSentence(info, translate, vscode.env.language) : undefined) ??
      errorText(e);
    void vscode.window.showErrorMessage(
      vscode.l10n.t('Could not change run "{0}": {1}', runDisplayName(app.ctx, record), why),
    );
  }
}

/** Stop or Save Checkpoint Now through the runner's `control`, with its answer shown. */
async function control(app: App, node: unknown, action: ControlAction): Promise<void> {
  const found = await resolveRun(
    app,
    node,
    action === 'stop' ? vscode.l10n.t('Stop which run?') : vscode.l10n.t('Save a checkpoint of which run?'),
    (r) => isLive(app.runs.state(r)),
  );
  if (!found) return;
  const { def, record } = found;
  const name = record.name ?? record.runId;
  const title =
    action === 'stop' ? `Stopping "${name}" (it saves a checkpoint first)…` : `Asking "${name}" to save a checkpoint…`;
  try {
    await app.ctx.ensureRunner(def);
    const res = (await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, () =>
      controlRun(app.ctx.transport(def), record.runDir, action, { timeoutMs: 180_000 }),
    )) as { handled?: boolean; state?: string };
    app.ctx.log.info(`control ${action} ${record.runId}: ${JSON.stringify(res)}`);
    if (action === 'checkpoint') {
      void vscode.window.showInformationMessage(
        res.handled
          ? vscode.l10n.t('"{0}" took the checkpoint request.', name)
          : vscode.l10n.t('"{0}" did not take the checkpoint request (state {1}).', name, res.state ?? '?'),
      );
    } else if (!res.handled) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t('"{0}" has not stopped yet (state {1}); it may still stop.', name, res.state ?? '?'),
      );
    }
  } catch (e) {
    void vscode.window.showErrorMessage(
      action === 'stop'
        ? vscode.l10n.t('Could not stop "{0}": {1}', name, errorText(e))
        : vscode.l10n.t('Could not checkpoint "{0}": {1}', name, errorText(e)),
    );
  }
  void vscode.commands.executeCommand(`${VIEWS.runs}.focus`);
}
