// Checkpoints in words, in the display language (`t`): a checkpoint in one line as the Checkpoints
// view and the pickers show it (epoch, step, accuracy, loss, why it was saved, size and age), why a
// file is unusable, and an evaluation folder whose classes are not the run's.
import { saveReason } from '../../shared/checkpointsProtocol';
import { english, joined, type Translate } from '../l10n';
import type { VerifyEntry } from './client';
import { formatBytes, type CheckpointEntry } from './manifest';

/** `5 s ago`, `3 min ago`, `2 h ago`, `4 d ago`; '' without a time. */
export function formatAge(createdAt: number | null, now: number, t: Translate = english): string {
  if (createdAt === null) return '';
  const s = Math.max(0, now - createdAt);
  if (s < 60) return t('{0} s ago', Math.round(s));
  if (s < 3600) return t('{0} min ago', Math.round(s / 60));
  if (s < 86400) return t('{0} h ago', Math.round(s / 3600));
  return t('{0} d ago', Math.round(s / 86400));
}

/** The one-line description a tree row shows: `e2 · s6 · acc 75.0% · loss 0.412 · 45 MB · 3 min ago`. */
export function describeEntry(e: CheckpointEntry, now: number, t: Translate = english): string {
  const parts: string[] = [];
  if (e.epoch !== null) parts.push(`e${e.epoch}`);
  if (e.step !== null) parts.push(`s${e.step}`);
  if (e.valAcc !== null) parts.push(t('acc {0}%', (e.valAcc * 100).toFixed(1)));
  if (e.valLoss !== null) parts.push(t('val loss {0}', e.valLoss.toPrecision(3)));
  else if (e.loss !== null) parts.push(t('loss {0}', e.loss.toPrecision(3)));
  if (e.reason) parts.push(saveReason(e.reason, t));
  parts.push(formatBytes(e.bytes));
  const age = formatAge(e.createdAt, now, t);
  if (age) parts.push(age);
  return parts.join(' · ');
}

/** Why a verified file is not usable (the view's error icon and text), or undefined when it is fine. */
export function verifyProblem(v: VerifyEntry, t: Translate = english): string | undefined {
  if (v.reason) return v.reason; // the runner's own words
  if (!v.exists) return t('file missing');
  if (v.bytes_ok === false) return t('size differs from checkpoints.json (truncated?)');
  if (v.sha256_ok === false) return t('sha256 no longer matches checkpoints.json');
  return undefined;
}

/** A message for a class mismatch that names both sides. */
export function classMismatchText(m: { missing: string[]; extra: string[] }, t: Translate = english): string {
  const parts: string[] = [];
  if (m.missing.length)
    parts.push(
      m.missing.length === 1
        ? t('missing class folder: {0}', m.missing[0])
        : t('missing class folders: {0}', joined(m.missing, t)),
    );
  if (m.extra.length)
    parts.push(
      m.extra.length === 1
        ? t('extra class folder: {0}', m.extra[0])
        : t('extra class folders: {0}', joined(m.extra, t)),
    );
  return t(
    "The folder's classes differ from the run's ({0}). Pick an ImageFolder with the run's class folders.",
    parts.join(t('; ')),
  );
}
