// What Prune and Delete would remove, decided before anything is asked or deleted, so the
// confirmation lists exactly what goes. The best checkpoint is never in a prune; deleting it by
// hand needs its own, second confirmation (`needsBestConfirmation`). The runner's
// `delete-checkpoints` enforces the same rules again on the target.
import { english, joined, type Translate } from '../l10n';
import type { CheckpointEntry } from './manifest';

export interface PrunePlan {
  /** Files kept, newest first (the best among them). */
  keep: string[];
  /** Files to delete, oldest first. */
  drop: string[];
}

/**
 * Keep best + newest N: the `keepNewest` most recent checkpoints in saving order, and the best
 * wherever it is; everything else goes. While the run is live its newest checkpoint is kept as well
 * (the run may still be writing after it), which `keepNewest >= 1` already does.
 */
export function prunePlan(entries: readonly CheckpointEntry[], keepNewest: number): PrunePlan {
  if (!Number.isInteger(keepNewest) || keepNewest < 0)
    throw new Error(`keep newest must be a whole number >= 0, got ${keepNewest}`);
  const newestFirst = [...entries].sort((a, b) => b.order - a.order);
  const keep = new Set(newestFirst.slice(0, keepNewest).map((e) => e.file));
  for (const e of entries) if (e.best) keep.add(e.file);
  return {
    keep: newestFirst.filter((e) => keep.has(e.file)).map((e) => e.file),
    drop: newestFirst
      .filter((e) => !keep.has(e.file))
      .reverse()
      .map((e) => e.file),
  };
}

export interface DeletePlan {
  /** Files that can go after the first confirmation. */
  plain: string[];
  /** The best checkpoint, if it was selected: only with a second, explicit confirmation. */
  best?: string;
  /** Selected files refused outright, with why (the newest of a live run; unknown names). */
  refused: { file: string; reason: string }[];
}

/** Splits a user's selection for Delete: the best needs a second yes; a live run's newest is refused. */
export function deletePlan(
  entries: readonly CheckpointEntry[],
  selected: readonly string[],
  live: boolean,
  t: Translate = english,
): DeletePlan {
  const byFile = new Map(entries.map((e) => [e.file, e]));
  let newest: CheckpointEntry | undefined;
  for (const e of entries) if (!newest || e.order > newest.order) newest = e;
  const plan: DeletePlan = { plain: [], refused: [] };
  for (const file of new Set(selected)) {
    const e = byFile.get(file);
    if (!e) plan.refused.push({ file, reason: t('not in checkpoints.json (refresh the view)') });
    else if (live && e === newest)
      plan.refused.push({ file, reason: t('the newest checkpoint of a live run (stop the run first)') });
    else if (e.best) plan.best = file;
    else plan.plain.push(file);
  }
  return plan;
}

/** The lines of a confirmation: `it-e1-s3.ckpt (e1 · acc 50.0%)`. */
export function listForConfirmation(
  entries: readonly CheckpointEntry[],
  files: readonly string[],
  t: Translate = english,
): string[] {
  const byFile = new Map(entries.map((e) => [e.file, e]));
  return files.map((f) => {
    const e = byFile.get(f);
    const base = f.split('/').pop() ?? f;
    if (!e) return base;
    const bits = [
      e.epoch !== null ? t('epoch {0}', e.epoch) : '',
      e.step !== null ? t('step {0}', e.step) : '',
      e.valAcc !== null ? t('val acc {0}%', (e.valAcc * 100).toFixed(1)) : '',
      e.best ? t('BEST') : '',
    ].filter(Boolean);
    return bits.length ? t('{0} ({1})', base, joined(bits, t)) : base;
  });
}
