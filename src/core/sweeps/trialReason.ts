// A sweep trial's reason in the user's language. The scheduler keeps a failed trial's run error
// `code` and `params` beside its English `reason` (docs/sweeps.md); the code is worded as the
// run's own error is (runnerErrors.ts). A code this extension does not know, a parameter that does
// not fit, or a reason without a code (pruned, stopped, a spec problem) keep the runner's English.
import type { SweepStatus, SweepTrial } from '../../shared/sweepProtocol';
import { wordedRunnerError } from '../runs/runnerErrors';
import { ENGLISH_WORDING, type Wording } from '../runs/wording';

export function trialReasonText(
  trial: Pick<SweepTrial, 'reason' | 'error_code' | 'error_params'>,
  w: Wording = ENGLISH_WORDING,
): string | null {
  if (trial.error_code !== null) {
    const worded = wordedRunnerError({ code: trial.error_code, params: trial.error_params ?? {} }, w);
    if (worded) return worded.fix ? w.t('{0} (fix: {1})', worded.message, worded.fix) : worded.message;
  }
  return trial.reason;
}

/** The status with every trial's reason worded, as the sweep panel shows it. */
export function withTrialReasons(status: SweepStatus, w: Wording): SweepStatus {
  return { ...status, trials: status.trials.map((t) => ({ ...t, reason: trialReasonText(t, w) })) };
}
