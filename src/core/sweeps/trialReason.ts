// A sweep trial's reason in the user's language. The scheduler keeps a failed trial's run error
// `code` and `params` beside its English `reason` (docs/sweeps.md), worded as the run's own error
// is (runnerErrors.ts), and a `reason_code` for its own fixed reasons, worded by the table below. A
// code this extension does not know, a parameter that does not fit, or a reason without a code (a
// spec that did not validate, a launch that failed) keep the runner's English.
import type { SweepStatus, SweepTrial } from '../../shared/sweepProtocol';
import { wordedRunnerError } from '../runs/runnerErrors';
import { type Translate } from '../l10n';
import { ENGLISH_WORDING, type Wording } from '../runs/wording';

/** The scheduler's own reasons (runner/ascend_finetune/sweep/scheduler.py, `reason_code`). */
const REASONS: Readonly<Record<string, (t: Translate) => string>> = {
  run_failed: (t) => t('The run failed without reporting an error.'),
  no_finite_value: (t) => t('The run completed without a finite value of the objective.'),
  sweep_stopped: (t) => t('Stopped by Stop Sweep: it runs again when the sweep is resumed.'),
  run_stopped: (t) => t('Its run was stopped by hand: counted as pruned.'),
  no_result: (t) => t('The run ended without a result (killed, or the machine restarted): it runs again.'),
  surplus: (t) => t('Asked after the sweep had all its trials (another scheduler asked first): not run.'),
  no_free_slot: (t) => t('No free device slot when the sweep was resumed: it runs again.'),
};

export function trialReasonText(
  trial: Pick<SweepTrial, 'reason' | 'reason_code' | 'error_code' | 'error_params'>,
  w: Wording = ENGLISH_WORDING,
): string | null {
  if (trial.error_code !== null) {
    const worded = wordedRunnerError({ code: trial.error_code, params: trial.error_params ?? {} }, w);
    if (worded) return worded.fix ? w.t('{0} (fix: {1})', worded.message, worded.fix) : worded.message;
  }
  if (trial.reason_code !== null && Object.hasOwn(REASONS, trial.reason_code)) return REASONS[trial.reason_code](w.t);
  return trial.reason;
}

/** The status with every trial's reason worded, as the sweep panel shows it. */
export function withTrialReasons(status: SweepStatus, w: Wording): SweepStatus {
  return { ...status, trials: status.trials.map((t) => ({ ...t, reason: trialReasonText(t, w) })) };
}
