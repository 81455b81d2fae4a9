// Writes a spec to a target, validates it there and launches it; the run goes into the index and
// its stream starts. Used by the wizard, spec files, checkpoints and the task provider. A spec with
// several `device.nodes` is written, validated and launched on each node (src/core/runs/multiNode.ts).
import * as vscode from 'vscode';
import type { RunRecord } from '../core/runs/runIndex';
import { preflightQuestions } from '../core/runs/preflight';
import { launchNodes, nodeTargets, specNodes, type NodeSite } from '../core/runs/multiNode';
import { launchRun, RunnerError, runnerArgs, runRunner } from '../core/targets/runnerCli';
import { problemLines, targetSpecPath } from '../core/spec/builder';
import type { Target } from '../core/targets/target';
import { writeTargetFile } from '../core/targets/ops';
import type { TargetDef } from '../core/targets/model';
import { VIEWS } from '../shared/commands';
import type { App } from './app';
import { problemWording, translate } from './l10n';

export type LaunchOutcome =
  | { kind: 'launched'; record: RunRecord; specPath: string }
  | { kind: 'problems'; lines: string[]; specPath: string }
  /** The pre-flight found something and `confirmPreflight` said not to launch. */
  | { kind: 'held'; choice: 'edit' | 'cancel'; specPath: string };

export interface LaunchOptions {
  /** A checkpoint on the target to continue from (`launch --resume`; a new run directory). */
  resume?: string;
  /** Ask before launching when `validate --preflight` finds something worth a question (busy
   * NPUs, little free HBM, a CANN MindSpore does not support); without it no pre-flight runs. */
  confirmPreflight?: (lines: string[]) => Promise<'launch' | 'edit' | 'cancel'>;
}

export async function launchSpec(
  app: App,
  def: TargetDef,
  spec: Record<string, unknown>,
  report: (step: string) => void = () => {},
  opts: LaunchOptions = {},
): Promise<LaunchOutcome> {
  // A spec with several `device.nodes` runs on each of them, `def` first (msrun's master).
  let defs = [def];
  const nodes = specNodes(spec);
  if (nodes.length > 1) {
    const resolved = nodeTargets(nodes, def, app.ctx.targets);
    if ('missing' in resolved) {
      const lines = resolved.missing.map(
        (n) =>
          `device.nodes: ${vscode.l10n.t(
            '"{0}" is not one of your SSH targets (add it with Add SSH Target, by the host name or alias the spec uses)',
            n,
          )}`,
      );
      return { kind: 'problems', lines, specPath: '' };
    }
    if (opts.resume !== undefined) {
      throw new Error(
        vscode.l10n.t(
          'resuming a multi-node run is not supported yet: start a new run with this checkpoint as `model.pretrained`, or resume on one machine',
        ),
      );
    }
    defs = resolved.found;
  }
  const ready = await prepare(app, defs, spec, report, opts);
  if (ready.kind !== 'ready') return ready;
  const { sites } = ready;
  const specPath = sites[0].specPath;
  const log = app.ctx.log;
  if (sites.length === 1) {
    report(vscode.l10n.t('launching…'));
    const res = await launchRun(sites[0].target, specPath, def.runsRoot, { timeoutMs: 120_000, resume: opts.resume });
    log.info(`launched ${res.run_id} (pid ${res.pid}) in ${res.run_dir} on ${def.label}`);
    const resumedFrom = opts.resume === undefined ? undefined : opts.resume.split(/[\\/]/).pop();
    return {
      kind: 'launched',
      record: await track(app, def, spec, res.run_id, res.run_dir, undefined, resumedFrom),
      specPath,
    };
  }
  // The run is followed on the master, whose rank 0 writes the events.
  const { runs, masterPort } = await launchNodes(sites, { timeoutMs: 120_000, report, t: translate });
  for (const r of runs)
    log.info(
      `launched ${r.run_id} node ${r.nodeRank} (pid ${r.pid}) in ${r.run_dir} on ${r.label}, master port ${masterPort}`,
    );
  const others = runs.slice(1).map((r) => ({ targetId: defs[r.nodeRank].id, runDir: r.run_dir }));
  return { kind: 'launched', record: await track(app, def, spec, runs[0].run_id, runs[0].run_dir, others), specPath };
}

/**
 * Before a launch, on each target (the run's nodes, master first): the spec written, the runner
 * made ready, `validate` run (with the pre-flight when asked); then the pre-flight asked once for
 * all, each line naming its node when there are several.
 */
async function prepare(
  app: App,
  defs: readonly TargetDef[],
  spec: Record<string, unknown>,
  report: (step: string) => void,
  opts: LaunchOptions,
): Promise<{ kind: 'ready'; sites: NodeSite[] } | Exclude<LaunchOutcome, { kind: 'launched' }>> {
  const log = app.ctx.log;
  const name = runName(spec);
  const text = JSON.stringify(spec, null, 2) + '\n';
  const when = new Date();
  const many = defs.length > 1;
  const sites: NodeSite[] = [];
  const questions: string[] = [];
  for (const [rank, def] of defs.entries()) {
    const tag = (line: string) => (many ? `${def.label}: ${line}` : line);
    report(
      many
        ? vscode.l10n.t('node {0} ({1}): writing and validating the spec…', rank, def.label)
        : vscode.l10n.t('writing the spec…'),
    );
    const specPath = await writeTargetFile(app.ctx.python(def), targetSpecPath(name, when), text);
    log.info(`spec for ${name} written to ${specPath} on ${def.label}`);
    await app.ctx.ensureRunner(def);
    if (!many)
      report(
        opts.confirmPreflight ? vscode.l10n.t('validating and checking the target…') : vscode.l10n.t('validating…'),
      );
    const transport = app.ctx.transport(def);
    const checked = await validateOn(app, transport, specPath, spec, opts);
    if (checked.kind === 'problems') return { kind: 'problems', lines: checked.lines.map(tag), specPath };
    questions.push(...checked.questions.map(tag));
    sites.push({ label: def.label, target: transport, specPath, runsRoot: def.runsRoot });
  }
  if (questions.length > 0 && opts.confirmPreflight) {
    log.warn(`pre-flight for ${name}:\n${questions.join('\n')}`);
    const choice = await opts.confirmPreflight(questions);
    if (choice !== 'launch') return { kind: 'held', choice, specPath: sites[0].specPath };
  }
  return { kind: 'ready', sites };
}

function runName(spec: Record<string, unknown>): string {
  return typeof spec.name === 'string' && spec.name.trim() !== '' ? spec.name : 'run';
}

/** `validate` (with the pre-flight when asked) on a target: its problems, or its pre-flight questions. */
async function validateOn(
  app: App,
  transport: Target,
  specPath: string,
  spec: Record<string, unknown>,
  opts: LaunchOptions,
): Promise<{ kind: 'problems'; lines: string[] } | { kind: 'ok'; questions: string[] }> {
  try {
    const args = runnerArgs.validate(specPath, opts.confirmPreflight !== undefined, opts.resume !== undefined);
    const checked = await runRunner(transport, args, { timeoutMs: 300_000 });
    return {
      kind: 'ok',
      questions: preflightQuestions(checked, {
        t: (message, ...args) => vscode.l10n.t(message, ...args),
        language: vscode.env.language,
      }),
    };
  } catch (e) {
    const lines =
      e instanceof RunnerError && e.exitCode === 2 ? problemLines(e.output, { wording: problemWording(), spec }) : [];
    if (lines.length === 0) throw e;
    app.ctx.log.warn(`validate ${specPath}:\n${lines.join('\n')}`);
    return { kind: 'problems', lines };
  }
}

/** The launched run goes into the index, its stream starts, and the Runs view shows it. */
async function track(
  app: App,
  def: TargetDef,
  spec: Record<string, unknown>,
  runId: string,
  runDir: string,
  nodes?: RunRecord['nodes'],
  resumedFrom?: string,
): Promise<RunRecord> {
  const model = spec.model as { backbone?: unknown } | undefined;
  const record: RunRecord = {
    targetId: def.id,
    runId,
    runDir,
    name: runName(spec),
    backbone: typeof model?.backbone === 'string' ? model.backbone : undefined,
    state: 'running',
    startedAt: Date.now() / 1000,
    lastSeq: 0,
    ...(nodes?.length ? { nodes } : {}),
    ...(resumedFrom ? { resumedFrom } : {}),
  };
  await app.ctx.index.upsert(record);
  // The walkthrough's "Start a fine-tune" step completes on this, however the run was started.
  void vscode.commands.executeCommand('setContext', 'ascend.runLaunched', true);
  app.monitor.follow(record, { launched: true });
  app.runs.refresh();
  void vscode.commands.executeCommand(`${VIEWS.runs}.focus`);
  return record;
}

/** The pre-flight question: a modal listing what was found, Launch Anyway or (in the wizard) Edit. */
export async function askPreflight(lines: string[], canEdit: boolean): Promise<'launch' | 'edit' | 'cancel'> {
  const launch = vscode.l10n.t('Launch Anyway');
  const edit = vscode.l10n.t('Edit Choices');
  const buttons = canEdit ? [launch, edit] : [launch];
  const n = lines.length;
  const a = await vscode.window.showWarningMessage(
    n === 1
      ? vscode.l10n.t('Pre-flight: 1 thing to check before this run starts')
      : vscode.l10n.t('Pre-flight: {0} things to check before this run starts', n),
    { modal: true, detail: lines.join('\n\n') },
    ...buttons,
  );
  return a === launch ? 'launch' : a === edit ? 'edit' : 'cancel';
}
