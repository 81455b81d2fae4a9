// The Sweep panel's words for the codes the runner writes (docs/protocol.md section 7): a sweep's
// state, a trial's outcome or Optuna state, the objective's direction, in the display language
// (webview/shared/l10n.ts). A code this page does not know is shown as it came.
import * as l10n from '../shared/l10n';
import { stateWord } from '../dashboard/words';

/** The sweep's state: running, completed, stopped, failed, lost (the run states' words). */
export function sweepStateWord(state: string): string {
  return stateWord(state);
}

/** A trial's outcome (completed, pruned, failed, invalid, lost, stopped) or, before one, its state in lower case. */
export function trialWord(code: string): string {
  switch (code) {
    case 'pruned':
      return l10n.t('pruned');
    case 'invalid':
      return l10n.t('invalid');
    case 'fail':
      return l10n.t('failed');
    case 'complete':
      return l10n.t('completed');
    case 'waiting':
      return l10n.t('waiting');
    default:
      return stateWord(code);
  }
}

export function directionWord(direction: string): string {
  if (direction === 'maximize') return l10n.t('maximize');
  if (direction === 'minimize') return l10n.t('minimize');
  return direction;
}
