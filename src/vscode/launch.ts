// Writes a spec to a target, validates it there and launches it; the run goes into the index and
// its stream starts. Used by the wizard and by the task provider.
import * as vscode from 'vscode';
import type { RunRecord } from '../core/runIndex';
import { launchRun, RunnerError, runnerArgs, runRunner, type LaunchResult } from '../core/runnerCli';
import { problemLines, targetSpecPath } from '../core/specBuilder';
import { writeTargetFile } from '../core/targetOps';
import type { TargetDef } from '../core/targetsModel';
import { VIEWS } from '../shared/commands';
import type { App } from './app';

export type LaunchOutcome = { kind: 'launched'; record: RunRecord; specPath: string } | { kind: 'problems'; lines: string[]; specPath: string };

/** `resume`: a checkpoint on the target to continue from (`launch --resume`; a new run directory). */
export async function launchSpec(app: App, def: TargetDef, spec: Record<string, unknown>, report: (step: string) => void = () => {}, opts: { resume?: string } = {}): Promise<LaunchOutcome> {
  const name = typeof spec.name === 'string' && spec.name.trim() !== '' ? spec.name : 'run';
  const log = app.ctx.log;
  report('writing the spec…');
  const specPath = await writeTargetFile(app.ctx.python(def), targetSpecPath(name, new Date()), JSON.stringify(spec, null, 2) + '\n');
  log.info(`spec for ${name} written to ${specPath} on ${def.label}`);
  await app.ctx.ensureRunner(def);
  report('validating…');
  const transport = app.ctx.transport(def);
  try {
    await runRunner(transport, runnerArgs.validate(specPath), { timeoutMs: 120_000 });
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
