// The AMP health card: what the loss scale and the overflows of a run say, in plain language, with
// a fix. The patterns (see docs/protocol.md, `step`, and the MindSpore facts):
// - start-up burst: a dynamic scale that starts high (2^24 by default) overflows on the first
//   steps and halves each time until gradients fit in fp16, then runs clean. Normal.
// - scale pinned low: the dynamic scale sits at its floor (1.0) and steps still overflow: the
//   gradients are not finite even unscaled, so no update is ever applied.
// - overflow storm: many overflows in the recent window, well after the start.
// - NaN/Inf loss without overflow: the loss diverged while the gradients were finite (or not
//   checked): data or learning rate, not mixed precision.
// - no loss scaling with fp16 (O2/O3): small gradients underflow to zero and overflows go unseen.
import type { AmpDiagnosis, AmpHealth } from '../../shared/dashboardProtocol';
import { english, type Translate } from '../l10n';
import { ampScaling } from './ampScaling';
import { lowerBound } from './downsample';
import type { RunSeriesStore, StepColumns } from './seriesStore';

export const AMP_WINDOW = 200;
/** Overflows in the window that make a storm (outside the start-up burst). */
const STORM_MIN = 8;
const STORM_FRACTION = 0.05;
/** Steps at the scale floor, nearly all overflowing, that make "pinned". */
const PINNED_MIN_STEPS = 8;
const SCALE_FLOOR = 1;
/** Clean steps between two overflows that still belong to the start-up burst. */
const BURST_GAP = 4;

const SEVERITY_RANK = { error: 0, warning: 1, info: 2 } as const;

/** The card's figures and diagnoses; `t` words the sentences (the UI's language; English by default). */
export function ampHealth(store: RunSeriesStore, window = AMP_WINDOW, t: Translate = english): AmpHealth {
  const s = store.steps;
  const n = s.length;
  const seg = Math.min(store.segmentStartRow, n);
  // the rows of the last `window` steps (a sink's row stands for its steps, and counts its overflows)
  const recentFrom = n ? Math.max(seg, lowerBound(s.step.data, n, s.step.data[n - 1] - window + 1)) : seg;
  let overflowsRecent = 0;
  for (let i = recentFrom; i < n; i++) overflowsRecent += s.overflow.data[i];
  const currentScale = n ? s.lossScale.data[n - 1] : NaN;
  const diagnosis: AmpDiagnosis[] = [];
  const mode = store.start?.lossScaleMode;
  const level = store.start?.ampLevel;
  const fp16 = level === 'O1' || level === 'O2' || level === 'O3';

  // The start-up burst: overflows from the segment's first step on, each within BURST_GAP steps of
  // the previous one, while the scale halves down (a real 2^24 run on CPU: steps 1-7 and 9).
  let burstEnd = seg; // rows [seg, burstEnd) hold the burst
  let burst = 0;
  if (seg < n && s.overflow.data[seg]) {
    for (let i = seg, gap = 0; i < n && gap <= BURST_GAP; i++) {
      if (s.overflow.data[i]) {
        burst += s.overflow.data[i];
        burstEnd = i + 1;
        gap = 0;
      } else gap++;
    }
  }
  // overflows of the recent window that are not part of the burst
  let stormOverflows = 0;
  for (let i = Math.max(recentFrom, burstEnd); i < n; i++) stormOverflows += s.overflow.data[i];
  let storm = false;

  if (store.nanWithoutOverflow > 0) {
    const first = firstNanWithoutOverflow(store);
    const scaled = mode === 'dynamic' || mode === 'fixed';
    diagnosis.push({
      code: 'nan_without_overflow',
      severity: 'error',
      message:
        (store.nanWithoutOverflow === 1
          ? t('1 step had a NaN or Inf loss')
          : t('{0} steps had a NaN or Inf loss', store.nanWithoutOverflow)) +
        (first !== undefined ? t(' (first at step {0})', first) : '') +
        (scaled
          ? t(
              ' while the gradients did not overflow. That is not mixed precision: the loss itself diverged, or the data holds NaN/Inf or bad labels. Those updates were skipped.',
            )
          : t(
              '. Without loss scaling the gradients are not checked, so this is a diverging loss, not a loss-scale overflow. Those updates were skipped.',
            )),
      fix:
        t(
          'Lower train.lr (or add train.warmup_steps), and check the training images and labels for broken or extreme values.',
        ) +
        (fp16 && !scaled
          ? t(' If it only happens at {0}, retry with amp.level O0 to tell fp16 range from divergence.', String(level))
          : ''),
    });
  }

  const pinnedRows = pinnedAtFloor(store, recentFrom);
  if (mode === 'dynamic' && pinnedRows.steps >= PINNED_MIN_STEPS && pinnedRows.overflows >= pinnedRows.steps * 0.9) {
    diagnosis.push({
      code: 'scale_pinned_low',
      severity: 'error',
      message: t(
        'The loss scale is at its floor of {0} and the last {1} steps still overflowed: the gradients are not finite even unscaled, so no update is applied and the model has stopped learning (the loss stays flat).',
        fmtScale(currentScale, t),
        pinnedRows.steps,
      ),
      fix: t(
        'This is no longer an fp16 range problem: lower train.lr, check the data for NaN/Inf, or run with amp.level O0 to find where the values blow up.',
      ),
    });
  } else if (stormOverflows >= Math.max(STORM_MIN, stepsIn(s, recentFrom, n) * STORM_FRACTION)) {
    storm = true;
    const recentSteps = stepsIn(s, recentFrom, n);
    diagnosis.push({
      code: 'overflow_storm',
      severity: 'warning',
      message: t(
        '{0} of the last {1} steps overflowed (scale now {2}), long after the start-up. Each overflow skips an update, so training slows down or stalls; gradients are repeatedly too large for fp16 at this scale.',
        overflowsRecent,
        recentSteps,
        fmtScale(currentScale, t),
      ),
      fix: t('Lower train.lr or add warmup; if it persists, use amp.level O1 (fp16 only where it is safe) or O0.'),
    });
  }

  if (burst > 0 && !storm && mode === 'dynamic' && pinnedRows.steps < PINNED_MIN_STEPS) {
    // the scale before the first halving: the first row's scale is after its overflows' halvings
    const startScale = s.lossScale.data[seg] * 2 ** s.overflow.data[seg];
    const endScale = fmtScale(s.lossScale.data[burstEnd - 1], t);
    let later = 0;
    for (let i = burstEnd; i < n; i++) later += s.overflow.data[i];
    const settled = stepsIn(s, burstEnd, n) > BURST_GAP;
    diagnosis.push({
      code: 'startup_burst',
      severity: 'info',
      message: settled
        ? t(
            'Normal start-up: the dynamic loss scale started at {0} and overflowed on {1} of the first {2} steps, halving each time down to {3}; ',
            fmtScale(startScale, t),
            burst,
            stepsIn(s, seg, burstEnd),
            endScale,
          ) +
          (later === 0
            ? t('no overflow since.')
            : later === 1
              ? t('since then only 1 isolated overflow (the scale probing upward).')
              : t('since then only {0} isolated overflows (the scale probing upward).', later)) +
          (burst === 1
            ? t(' That 1 skipped update is the price of starting high.')
            : t(' Those {0} skipped updates are the price of starting high.', burst))
        : t(
            'Start-up: the dynamic loss scale started at {0} and is halving on each overflow ({1} so far, now {2}) until the gradients fit in fp16. This is expected for the first steps.',
            fmtScale(startScale, t),
            burst,
            endScale,
          ),
      fix: burst > 12 ? t('Optional: start lower (amp.init_scale {0}) to skip fewer steps.', endScale) : undefined,
    });
  }

  if (n > 0 && (mode === 'none' || (mode === undefined && Number.isNaN(currentScale))) && fp16) {
    diagnosis.push({
      code: 'no_scaling',
      severity: 'warning',
      message: t(
        'This run trains in fp16 ({0}) without loss scaling: small gradients underflow to zero, and overflowing gradients are not detected (only a NaN/Inf loss is).',
        String(level),
      ),
      fix: t('Set amp.loss_scale to dynamic (the default), or train with amp.level O0.'),
    });
  }

  diagnosis.sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity]);
  if (diagnosis.length === 0) {
    diagnosis.push({
      code: 'ok',
      severity: 'info',
      message:
        n === 0
          ? t('No steps yet.')
          : mode === 'none' || !fp16
            ? t('Full precision ({0}): no loss scaling needed.', level ?? 'O0')
            : t('No loss-scale problem: recent steps are not overflowing.'),
    });
  }
  const scaling = ampScaling(level, mode, t);
  return {
    applies: scaling.applies,
    ...(scaling.notApplicable ? { notApplicable: scaling.notApplicable } : {}),
    currentScale: Number.isNaN(currentScale) ? null : currentScale,
    overflowsTotal: store.overflowsTotal,
    overflowsRecent,
    window,
    skippedTotal: store.skippedTotal,
    diagnosis,
  };
}

/** The trailing steps (from `from`) at the scale floor, and how many of them overflowed. */
function pinnedAtFloor(store: RunSeriesStore, from: number): { steps: number; overflows: number } {
  const s = store.steps;
  let steps = 0;
  let overflows = 0;
  for (let i = s.length - 1; i >= from; i--) {
    if (!(s.lossScale.data[i] <= SCALE_FLOOR)) break;
    steps += stepsIn(s, i, i + 1);
    overflows += s.overflow.data[i];
  }
  return { steps, overflows };
}

/** Steps the rows [from, to) cover: one each, a sink row its first step to its step. */
function stepsIn(s: StepColumns, from: number, to: number): number {
  let steps = 0;
  for (let i = from; i < to; i++) {
    const first = s.firstStep.data[i];
    steps += Number.isNaN(first) ? 1 : s.step.data[i] - first + 1;
  }
  return steps;
}

function firstNanWithoutOverflow(store: RunSeriesStore): number | undefined {
  const s = store.steps;
  for (let i = 0; i < s.length; i++) if (!s.overflow.data[i] && Number.isNaN(s.loss.data[i])) return s.step.data[i];
  return undefined;
}

/** 16777216 → "2^24"; other values as they are. */
export function fmtScale(v: number, t: Translate = english): string {
  if (!Number.isFinite(v)) return t('unknown');
  const e = Math.log2(v);
  return Number.isInteger(e) && e >= 4 ? `2^${e}` : String(v);
}
