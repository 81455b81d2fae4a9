// The checkpoint pick of Classify with Checkpoint…: every run's checkpoints, the best of the newest
// run first (src/core/preview/checkpointOrder.ts) and preselected; only this machine's runs when
// the images are files here.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { describeEntry } from '../../core/checkpoints/describe';
import { classifyPickOrder } from '../../core/preview/checkpointOrder';
import { LOCAL_TARGET_ID } from '../../core/targets/model';
import type { ActionsHost } from '../checkpoints/actions';
import type { CkptRef } from '../checkpoints/types';

export async function pickClassifyCheckpoint(
  host: ActionsHost,
  title: string,
  localOnly: boolean,
): Promise<CkptRef | undefined> {
  const records = host.ctx.index.all().filter((r) => !localOnly || r.targetId === LOCAL_TARGET_ID);
  const items = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: vscode.l10n.t('Ascend: reading checkpoints') },
    async () => {
      const runs = await Promise.all(
        records.map(async (r) => ({
          run: r,
          startedAt: r.startedAt,
          checkpoints: (await host.view.load(r)).info?.checkpoints ?? [],
        })),
      );
      const entries = new Map(runs.flatMap((r) => r.checkpoints.map((c) => [`${r.run.runId}\0${c.file}`, c])));
      const now = Date.now() / 1000;
      return classifyPickOrder(runs).map((c, i) => {
        const entry = entries.get(`${c.run.runId}\0${c.file}`);
        return {
          label: `${c.best ? '$(star-full) ' : ''}${path.posix.basename(c.file)}`,
          description: `${host.view.record(c.run)?.name ?? c.run.name ?? c.run.runId}${entry ? ` · ${describeEntry(entry, now, vscode.l10n.t)}` : ''}`,
          detail:
            i === 0
              ? c.best
                ? vscode.l10n.t('the best of the newest run')
                : vscode.l10n.t('the newest run')
              : undefined,
          ref: { targetId: c.run.targetId, runId: c.run.runId, file: c.file },
        };
      });
    },
  );
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      localOnly
        ? vscode.l10n.t('No checkpoints of runs on this machine found.')
        : vscode.l10n.t('No checkpoints found.'),
    );
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { title, matchOnDescription: true }))?.ref;
}
