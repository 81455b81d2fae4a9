// A checkpoint in one line, as the Checkpoints view and the pickers show it, in the display
// language (`t`): epoch, step, accuracy, loss, why it was saved, size and age.
import { saveReason } from '../../shared/checkpointsProtocol';
import { english, type Translate } from '../l10n';
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
