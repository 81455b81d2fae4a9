// Sweeps in the Runs view: each target's `sweep-ls` (with the runs' `ls`), a fresh sweep-status for
// the running ones (sweep-ls has no counts or best while a sweep runs), and a refresh every few
// seconds while one runs, so its new trials appear beneath it.
import * as vscode from 'vscode';
import { listSweeps, sweepStatus } from '../../core/sweeps/client';
import type { TargetDef } from '../../core/targets/model';
import type { App } from '../app';
import { errorText } from '../context';

/** How often the Runs view lists again while a sweep runs. */
const LIVE_REFRESH_MS = 10_000;
let timer: NodeJS.Timeout | undefined;

export async function refreshSweeps(app: App, def: TargetDef): Promise<void> {
  const { ctx } = app;
  try {
    const { sweeps, warnings } = await listSweeps(ctx.transport(def), def.runsRoot, { timeoutMs: 60_000 });
    for (const w of warnings) ctx.log.warn(`sweep-ls on ${def.label}: ${w}`);
    app.runs.sweeps.setListing(def.id, sweeps);
    for (const s of sweeps.filter((x) => x.state === 'running')) {
      app.runs.sweeps.setStatus(def.id, await sweepStatus(ctx.transport(def), s.sweep_dir, { timeoutMs: 60_000 }));
    }
    if (sweeps.some((s) => s.state === 'running') && !timer)
      timer = setTimeout(() => {
        timer = undefined;
        void vscode.commands.executeCommand('ascend.refresh');
      }, LIVE_REFRESH_MS);
  } catch (e) {
    // A runner without Optuna still lists sweeps (sweep-ls opens no study); anything else is logged only.
    ctx.log.info(`sweep-ls on ${def.label}: ${errorText(e)}`);
  }
}
