// Writes a spec to a target, validates it there and launches it; the run goes into the index and
// its stream starts. Used by the wizard and by the task provider.
import * as vscode from 'vscode';
import type { RunRecord } from '../core/runIndex';
import { preflightQuestions } from '../core/preflight';
import { launchRun, RunnerError, runnerArgs, runRunner, type LaunchResult } from '../core/runnerCli';
import { problemLines, targetSpecPath } from '../core/specBuilder';
import { writeTargetFile } from '../core/targetOps';
import type { TargetDef } from '../core/targetsModel';
import { VIEWS } from '../shared/commands';
import type { App } from './app';

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

export async function launchSpec(app: App, def: TargetDef, spec: Record<string, unknown>, report: (step: string) => void = () => {}, opts: LaunchOptions = {}): Promise<LaunchOutcome> {
  const name = typeof spec.name === 'string' && spec.name.trim() !== '' ? spec.name : 'run';
  const log = app.ctx.log;
  report('writing the spec…');
  const specPath = await writeTargetFile(app.ctx.python(def), targetSpecPath(name, new Date()), JSON.stringify(spec, null, 2) + '\n');
  log.info(`spec for ${name} written to ${specPath} on ${def.label}`);
  await app.ctx.ensureRunner(def);
  report(opts.confirmPreflight ? 'validating and checking the target…' : 'validating…');
  const transport = app.ctx.transport(def);
  try {
    const checked = await runRunner(transport, runnerArgs.validate(specPath, opts.confirmPreflight !== undefined), { timeoutMs: 300_000 });
    const questions = preflightQuestions(checked);
    if (questions.length > 0 && opts.confirmPreflight) {
      log.warn(`pre-flight for ${specPath}:\n${questions.join('\n')}`);
      const choice = await opts.confirmPreflight(questions);
      if (choice !== 'launch') return { kind: 'held', choice, specPath };
    }
  } catch (e) {
    const lines = e instanceof RunnerError && e.exitCode === 2 ? problemLines(e.output) : [];
    if (lines.length === 0) throw e;
    log.warn(`validate ${specPath}:\n${lines.join('\n')}`);
    return { kind: 'problems', lines, specPath };
  }
  report('launching…');
  const res =
    opts.resume === undefined
      ? await launchRun(transport, specPath, def.runsRoot, { timeoutMs: 120_000 })
      : await runRunner<LaunchResult>(transport, [...runnerArgs.launch(specPath, def.runsRoot), '--resume', opts.resume], { timeoutMs: 120_000 });
  log.info(`launched ${res.run_id} (pid ${res.pid}) in ${res.run_dir} on ${def.label}`);
  const model = spec.model as { backbone?: unknown } | undefined;
  const record: RunRecord = {
    targetId: def.id,
    runId: res.run_id,
    runDir: res.run_dir,
    name,
    backbone: typeof model?.backbone === 'string' ? model.backbone : undefined,
    state: 'running',
    startedAt: Date.now() / 1000,
    lastSeq: 0,
  };
  await app.ctx.index.upsert(record);
  app.monitor.follow(record, { launched: true });
  app.runs.refresh();
  void vscode.commands.executeCommand(`${VIEWS.runs}.focus`);
  return { kind: 'launched', record, specPath };
}

/** The pre-flight question: a modal listing what was found, Launch Anyway or (in the wizard) Edit. */
export async function askPreflight(lines: string[], canEdit: boolean): Promise<'launch' | 'edit' | 'cancel'> {
  const buttons = canEdit ? ['Launch Anyway', 'Edit Choices'] : ['Launch Anyway'];
  const n = lines.length;
  const a = await vscode.window.showWarningMessage(`Pre-flight: ${n} thing${n === 1 ? '' : 's'} to check before this run starts`, { modal: true, detail: lines.join('\n\n') }, ...buttons);
  return a === 'Launch Anyway' ? 'launch' : a === 'Edit Choices' ? 'edit' : 'cancel';
}
