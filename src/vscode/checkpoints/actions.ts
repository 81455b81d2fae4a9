// The checkpoint actions: evaluate, export, compare, resume, fine-tune from, download, reveal,
// copy the path, delete and prune. The tree's commands (commands.ts) and the checkpoint explorer
// (explorer.ts) both call them. They work on what the view loaded (CheckpointSource) and ask the
// runner through src/core; their dependencies come in an ActionsHost, built once at activation.
// About 500 lines: one short function per action, sharing the pickers and the runner client's errors at the top.
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  checkpointPath,
  classMismatch,
  compareCheckpoints,
  deleteCheckpoints,
  evaluateCheckpoint,
  exportCheckpoint,
  type CompareResult,
  type EvalResult,
  type ExportFormat,
} from '../../core/checkpoints/client';
import { downloadCheckpoint, downloadPath, IntegrityError } from '../../core/checkpoints/download';
import { classMismatchText, describeEntry } from '../../core/checkpoints/describe';
import { formatBytes } from '../../core/checkpoints/manifest';
import { deletePlan, listForConfirmation, prunePlan } from '../../core/checkpoints/prune';
import type { CheckpointDetail, RunCheckpoints } from '../../core/checkpoints/runInfo';
import type { RunRecord } from '../../core/runs/runIndex';
import { choicesFromSpec } from '../../core/spec/builder';
import { listFolder } from '../../core/targets/ops';
import type { TargetDef } from '../../core/targets/model';
import { joined } from '../../shared/l10n';
import { errorText, type Ctx } from '../context';
import type { LaunchOptions, LaunchOutcome } from '../launch';
import { runKey, type RunRef } from '../runMonitor';
import type { WizardStart } from '../startWizard';
import { LONG_TIMEOUT_MS, TIMEOUT_MS, type CheckpointSource, type CkptRef } from './types';

/** What the actions need, given at construction (commands.ts builds it from the App). */
export interface ActionsHost {
  ctx: Pick<Ctx, 'index' | 'target' | 'python' | 'transport' | 'ensureRunner' | 'log'>;
  view: CheckpointSource;
  /** Whether the run is live (its shown state): Resume says so, Delete keeps what it still needs. */
  isLive(record: RunRecord): boolean;
  /** Launches a spec on a target (launch.ts's launchSpec). */
  launch(
    def: TargetDef,
    spec: Record<string, unknown>,
    report: (step: string) => void,
    opts: LaunchOptions,
  ): Promise<LaunchOutcome>;
  /** Opens the Start Fine-Tune wizard (startWizard.ts). */
  fineTune(start: WizardStart): Promise<void>;
}

export interface Resolved {
  def: TargetDef;
  record: RunRecord;
  info: RunCheckpoints;
  entry: CheckpointDetail;
  /** Absolute path on the target. */
  abs: string;
}

export async function resolve(host: ActionsHost, ref: CkptRef): Promise<Resolved> {
  const record = host.view.record(ref);
  const def = host.ctx.target(ref.targetId);
  if (!record || !def) throw new Error(vscode.l10n.t('run {0} or its target is not known any more', ref.runId));
  const l = await host.view.load(ref);
  if (!l.info) throw new Error(l.error ?? vscode.l10n.t('the run could not be read'));
  const entry = l.info.checkpoints.find((c) => c.file === ref.file);
  if (!entry) throw new Error(vscode.l10n.t('{0} is no longer in checkpoints.json (refresh the view)', ref.file));
  return { def, record, info: l.info, entry, abs: checkpointPath(record.runDir, entry.file) };
}

export async function pickCheckpoint(
  host: ActionsHost,
  title: string,
  run?: RunRef,
  exclude?: string,
): Promise<CkptRef | undefined> {
  const runs = run ? [run] : host.ctx.index.all();
  const items = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: vscode.l10n.t('Ascend: reading checkpoints') },
    async () => {
      const out: (vscode.QuickPickItem & { ref: CkptRef })[] = [];
      for (const r of runs) {
        const l = await host.view.load(r);
        const name = host.view.record(r)?.name ?? r.runId;
        for (const c of l.info?.checkpoints ?? []) {
          if (c.file === exclude) continue;
          out.push({
            label: `${c.best ? '$(star-full) ' : ''}${path.posix.basename(c.file)}`,
            description: `${name} · ${describeEntry(c, Date.now() / 1000, vscode.l10n.t)}`,
            ref: { targetId: r.targetId, runId: r.runId, file: c.file },
          });
        }
      }
      return out;
    },
  );
  if (items.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No checkpoints found.'));
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { title, matchOnDescription: true }))?.ref;
}

/** The folder to evaluate on: the run's validation set (undefined), a picked one, or cancel (null). */
export async function pickEvalData(
  host: ActionsHost,
  r: Resolved,
  choice?: 'val' | 'pick',
): Promise<string | undefined | null> {
  if (choice === undefined) {
    const items = [
      {
        label: vscode.l10n.t("$(check) The run's validation set"),
        description:
          r.info.valData ??
          vscode.l10n.t('held-out split of {0}', r.info.trainData ?? vscode.l10n.t('the training folder')),
        v: 'val' as const,
      },
      { label: vscode.l10n.t('$(folder-opened) Another ImageFolder on {0}…', r.def.label), v: 'pick' as const },
    ];
    choice = (
      await vscode.window.showQuickPick(items, {
        title: vscode.l10n.t('Evaluate {0}', path.posix.basename(r.entry.file)),
      })
    )?.v;
    if (!choice) return null;
  }
  if (choice === 'val') return undefined;
  let dir = r.info.valData ?? r.info.trainData ?? '~';
  for (;;) {
    let listing;
    try {
      listing = await listFolder(host.ctx.python(r.def), dir);
    } catch (e) {
      void vscode.window.showErrorMessage(vscode.l10n.t('Cannot list {0} on {1}: {2}', dir, r.def.label, errorText(e)));
      dir = '~';
      continue;
    }
    const items = [
      { label: vscode.l10n.t('$(check) Use this folder'), description: listing.path, use: listing.path },
      ...(listing.parent !== listing.path
        ? [{ label: vscode.l10n.t('$(arrow-up) ..'), description: listing.parent, go: listing.parent }]
        : []),
      ...listing.dirs.map((d) => ({ label: vscode.l10n.t('$(folder) {0}', d), go: path.posix.join(listing.path, d) })),
    ] as (vscode.QuickPickItem & { use?: string; go?: string })[];
    // A walk of several picks: a run's toast or the explorer's webview taking focus must not end it
    // (a pick hides on focus loss by default; seen in e2e as a walk that vanished mid-way).
    const r2 = await vscode.window.showQuickPick(items, {
      title: vscode.l10n.t('An ImageFolder on {0} (one sub-folder per class)', r.def.label),
      ignoreFocusOut: true,
    });
    if (!r2) return null;
    if (r2.use) return r2.use;
    if (r2.go) dir = r2.go;
  }
}

export async function evaluate(
  host: ActionsHost,
  ref: CkptRef,
  choice?: 'val' | 'pick',
): Promise<EvalResult | undefined> {
  const r = await resolve(host, ref);
  const data = await pickEvalData(host, r, choice);
  if (data === null) return undefined;
  await host.ctx.ensureRunner(r.def);
  const name = path.posix.basename(r.entry.file);
  try {
    const res = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: vscode.l10n.t('Ascend: evaluating {0}{1}…', name, data ? vscode.l10n.t(' on {0}', data) : ''),
      },
      () =>
        evaluateCheckpoint(host.ctx.transport(r.def), r.record.runDir, r.abs, { data }, { timeoutMs: LONG_TIMEOUT_MS }),
    );
    host.ctx.log.info(`eval ${r.abs}: accuracy ${res.accuracy} on ${res.num_images} images of ${res.data}`);
    host.view.refresh(ref); // the result is kept next to the checkpoint
    return res;
  } catch (e) {
    const m = classMismatch(e);
    throw m ? new Error(classMismatchText(m, vscode.l10n.t)) : e;
  }
}

export async function exportTo(host: ActionsHost, ref: CkptRef, format: ExportFormat): Promise<void> {
  const r = await resolve(host, ref);
  await host.ctx.ensureRunner(r.def);
  const label = format === 'onnx' ? 'ONNX' : 'MindIR';
  const res = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: vscode.l10n.t('Ascend: exporting {0} to {1}…', path.posix.basename(r.entry.file), label),
    },
    () =>
      exportCheckpoint(host.ctx.transport(r.def), r.record.runDir, r.abs, format, undefined, {
        timeoutMs: LONG_TIMEOUT_MS,
      }),
  );
  host.ctx.log.info(`export ${r.abs} -> ${res.file} (${res.bytes} bytes, input ${res.input_shape.join('x')})`);
  host.view.refresh(ref);
  const actions = r.def.kind === 'local' ? [vscode.l10n.t('Reveal')] : [];
  const shape = res.input_shape.join('×');
  void vscode.window
    .showInformationMessage(
      res.preprocessFile
        ? vscode.l10n.t(
            'Exported {0}: {1} ({2}, input {3}); its preprocessing and class names are in {4}.',
            label,
            res.file,
            formatBytes(res.bytes),
            shape,
            res.preprocessFile,
          )
        : vscode.l10n.t('Exported {0}: {1} ({2}, input {3}).', label, res.file, formatBytes(res.bytes), shape),
      ...actions,
    )
    .then((a) => {
      if (a === vscode.l10n.t('Reveal'))
        void vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(res.file));
    });
}

export async function compare(
  host: ActionsHost,
  a: CkptRef,
  b?: CkptRef,
): Promise<{ a: CkptRef; b: CkptRef; result: CompareResult } | undefined> {
  const ra = await resolve(host, a);
  b ??= await pickCheckpoint(
    host,
    vscode.l10n.t('Compare {0} with…', path.posix.basename(a.file)),
    { targetId: a.targetId, runId: a.runId },
    a.file,
  );
  if (!b) return undefined;
  if (b.targetId !== a.targetId) throw new Error(vscode.l10n.t('both checkpoints must be on the same target'));
  const rb = await resolve(host, b);
  await host.ctx.ensureRunner(ra.def);
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Ascend: comparing checkpoints…') },
    () =>
      compareCheckpoints(host.ctx.transport(ra.def), ra.abs, rb.abs, ra.record.runDir, { timeoutMs: LONG_TIMEOUT_MS }),
  );
  return { a, b, result };
}

export async function resumeFrom(host: ActionsHost, ref: CkptRef): Promise<void> {
  const r = await resolve(host, ref);
  if (!r.info.spec) throw new Error(vscode.l10n.t('the spec.json of {0} cannot be read', r.record.runId));
  const live = host.isLive(r.record);
  const yes = await vscode.window.showInformationMessage(
    vscode.l10n.t('Resume "{0}" from {1}?', r.record.name ?? r.record.runId, path.posix.basename(r.entry.file)),
    {
      modal: true,
      detail: vscode.l10n.t(
        'A new run on {0} continues from step {1} with the same spec, to the same total steps.{2}',
        r.def.label,
        r.entry.step ?? '?',
        live ? `\n${vscode.l10n.t('The original run is still live.')}` : '',
      ),
    },
    vscode.l10n.t('Resume'),
  );
  if (yes !== vscode.l10n.t('Resume')) return;
  const outcome = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Ascend: resuming on {0}', r.def.label) },
    (p) => host.launch(r.def, r.info.spec!, (message) => p.report({ message }), { resume: r.abs }),
  );
  if (outcome.kind === 'problems')
    void vscode.window.showErrorMessage(vscode.l10n.t('The run spec no longer validates'), {
      modal: true,
      detail: outcome.lines.join('\n'),
    });
  else if (outcome.kind === 'launched')
    void vscode.window.showInformationMessage(vscode.l10n.t('Resumed as {0}.', outcome.record.runId));
}

export async function fineTuneFrom(host: ActionsHost, ref: CkptRef): Promise<void> {
  const r = await resolve(host, ref);
  const spec = r.info.spec ?? {};
  const choices = { ...choicesFromSpec(spec), pretrained: r.abs, name: `${r.info.name ?? 'run'}-ft` };
  // The spec's other fields (val folder, image size, checkpoint policy) stay as the run had them.
  await host.fineTune({
    targetId: r.def.id,
    choices,
    baseSpec: { ...spec, model: { ...(spec.model as object), pretrained: r.abs } },
  });
}

export async function download(host: ActionsHost, ref: CkptRef): Promise<void> {
  const r = await resolve(host, ref);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  let dest: string | undefined = folder
    ? downloadPath(path.join(folder, 'checkpoints'), r.record.runId, r.entry.file)
    : undefined;
  if (!dest)
    dest = (
      await vscode.window.showSaveDialog({
        title: vscode.l10n.t('Download the checkpoint to'),
        saveLabel: vscode.l10n.t('Download'),
        filters: { Checkpoint: ['ckpt', 'safetensors'] },
      })
    )?.fsPath;
  if (!dest) return;
  const total = r.entry.bytes;
  try {
    const res = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: vscode.l10n.t('Ascend: downloading {0} from {1}', path.posix.basename(r.entry.file), r.def.label),
        cancellable: true,
      },
      (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        let last = 0;
        return downloadCheckpoint(
          host.ctx.python(r.def),
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
    host.ctx.log.info(
      `downloaded ${r.abs} from ${r.def.label} to ${res.file} (sha256 ${res.sha256}, verified ${res.verified})`,
    );
    const note = res.verified
      ? vscode.l10n.t('sha256 verified against checkpoints.json')
      : vscode.l10n.t('NOT verified: checkpoints.json has no sha256 for it');
    void vscode.window
      .showInformationMessage(
        vscode.l10n.t('Downloaded to {0} ({1}).', vscode.workspace.asRelativePath(res.file), note),
        vscode.l10n.t('Reveal'),
      )
      .then((a) => {
        if (a) void vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(res.file));
      });
  } catch (e) {
    if (e instanceof IntegrityError)
      void vscode.window.showErrorMessage(vscode.l10n.t('Download failed the integrity check: {0}', errorText(e)), {
        modal: true,
      });
    else throw e;
  }
}

export async function reveal(host: ActionsHost, ref: CkptRef): Promise<void> {
  const r = await resolve(host, ref);
  if (r.def.kind !== 'local') {
    void vscode.window
      .showInformationMessage(
        vscode.l10n.t('{0} is on {1}: download it first.', path.posix.basename(r.abs), r.def.label),
        vscode.l10n.t('Download'),
      )
      .then((a) => {
        if (a) void download(host, ref).catch((e) => vscode.window.showErrorMessage(errorText(e)));
      });
    return;
  }
  await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(r.abs));
}

export async function copyPath(host: ActionsHost, ref: CkptRef): Promise<void> {
  const r = await resolve(host, ref);
  await vscode.env.clipboard.writeText(r.abs);
  vscode.window.setStatusBarMessage(`Copied ${r.abs}${r.def.kind === 'ssh' ? ` (on ${r.def.label})` : ''}`, 4000);
}

/**
 * Deletes checkpoints of one run after a confirmation that lists them all; the best, if selected,
 * only after a second, explicit one (also when it is the only one selected). A no to the second
 * still deletes the others.
 */
export async function deleteSome(host: ActionsHost, refs: CkptRef[]): Promise<void> {
  const byRun = new Map<string, CkptRef[]>();
  for (const r of refs) byRun.set(runKey(r), [...(byRun.get(runKey(r)) ?? []), r]);
  if (byRun.size > 1) throw new Error(vscode.l10n.t('delete the checkpoints of one run at a time'));
  const r = await resolve(host, refs[0]);
  const live = host.isLive(r.record);
  const plan = deletePlan(
    r.info.checkpoints,
    refs.map((x) => x.file),
    live,
    vscode.l10n.t,
  );
  for (const x of plan.refused)
    void vscode.window.showWarningMessage(
      vscode.l10n.t('Not deleting {0}: {1}.', path.posix.basename(x.file), x.reason),
    );
  const asked = [...plan.plain, ...(plan.best ? [plan.best] : [])];
  if (!asked.length) return;
  const yes = await vscode.window.showWarningMessage(
    asked.length === 1
      ? vscode.l10n.t('Delete 1 checkpoint of "{0}" on {1}?', r.record.name ?? r.record.runId, r.def.label)
      : vscode.l10n.t(
          'Delete {0} checkpoints of "{1}" on {2}?',
          asked.length,
          r.record.name ?? r.record.runId,
          r.def.label,
        ),
    {
      modal: true,
      detail: [
        listForConfirmation(r.info.checkpoints, asked, vscode.l10n.t).join('\n'),
        plan.best ? vscode.l10n.t('The best checkpoint is asked about once more.') : '',
        vscode.l10n.t('This cannot be undone.'),
      ]
        .filter(Boolean)
        .join('\n\n'),
    },
    vscode.l10n.t('Delete'),
  );
  if (yes !== vscode.l10n.t('Delete')) return;
  const files = [...plan.plain];
  let allowBest = false;
  if (plan.best) {
    const sure = await vscode.window.showWarningMessage(
      files.length
        ? vscode.l10n.t('Also delete the BEST checkpoint {0}?', path.posix.basename(plan.best))
        : vscode.l10n.t('Really delete the BEST checkpoint {0}?', path.posix.basename(plan.best)),
      {
        modal: true,
        detail: vscode.l10n.t(
          "{0}\n\nIt has the run's highest validation accuracy. Delete it only if you are sure.",
          listForConfirmation(r.info.checkpoints, [plan.best], vscode.l10n.t)[0],
        ),
      },
      vscode.l10n.t('Delete the Best Checkpoint'),
    );
    if (sure === vscode.l10n.t('Delete the Best Checkpoint')) {
      files.push(plan.best);
      allowBest = true;
    }
  }
  if (!files.length) return;
  await runDelete(host, r, files, allowBest);
}

/** Keep best + newest N: asks N, lists what goes, deletes after a confirmation. */
export async function prune(host: ActionsHost, run: RunRef, keepNewest?: number): Promise<void> {
  const l = await host.view.load(run);
  if (!l.info) throw new Error(l.error ?? vscode.l10n.t('the run could not be read'));
  if (keepNewest === undefined) {
    const v = await vscode.window.showInputBox({
      title: vscode.l10n.t('Prune checkpoints: keep the best and the newest N'),
      value: '2',
      prompt: vscode.l10n.t('N, the newest checkpoints to keep besides the best'),
      validateInput: (s) => (/^\d+$/.test(s.trim()) && Number(s) >= 1 ? undefined : 'a whole number, 1 or more'),
    });
    if (v === undefined) return;
    keepNewest = Number(v.trim());
  }
  const plan = prunePlan(l.info.checkpoints, keepNewest);
  const record = host.view.record(run);
  if (!record) return;
  if (plan.drop.length === 0) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t(
        'Nothing to prune: {0} checkpoint(s) kept (the best and the newest {1}).',
        plan.keep.length,
        keepNewest,
      ),
    );
    return;
  }
  const yes = await vscode.window.showWarningMessage(
    plan.drop.length === 1
      ? vscode.l10n.t('Prune "{0}": delete 1 checkpoint?', record.name ?? record.runId)
      : vscode.l10n.t('Prune "{0}": delete {1} checkpoints?', record.name ?? record.runId, plan.drop.length),
    {
      modal: true,
      detail: vscode.l10n.t(
        'Deleted:\n{0}\n\nKept:\n{1}',
        listForConfirmation(l.info.checkpoints, plan.drop, vscode.l10n.t).join('\n'),
        listForConfirmation(l.info.checkpoints, plan.keep, vscode.l10n.t).join('\n'),
      ),
    },
    vscode.l10n.t('Delete'),
  );
  if (yes !== vscode.l10n.t('Delete')) return;
  const r = await resolve(host, { ...run, file: plan.drop[0] });
  await runDelete(host, r, plan.drop, false);
}

async function runDelete(host: ActionsHost, r: Resolved, files: string[], allowBest: boolean): Promise<void> {
  await host.ctx.ensureRunner(r.def);
  const res = await deleteCheckpoints(host.ctx.transport(r.def), r.record.runDir, files, allowBest, {
    timeoutMs: TIMEOUT_MS,
  });
  host.ctx.log.info(`deleted ${res.deleted.join(', ')} in ${r.record.runDir}; kept ${res.kept.join(', ')}`);
  host.view.refresh(r.record);
  const notDone = files.filter((f) => !res.deleted.some((d) => d === f || d.endsWith(`/${path.posix.basename(f)}`)));
  if (notDone.length)
    void vscode.window.showWarningMessage(
      vscode.l10n.t(
        'The runner kept {0}.',
        joined(
          notDone.map((f) => path.posix.basename(f)),
          vscode.l10n.t,
        ),
      ),
    );
}
