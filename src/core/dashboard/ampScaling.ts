// The one place that decides whether loss scaling applies to a run and how the run's AMP set-up is
// worded: the dashboard header and the AMP health card both read it, so they cannot disagree (an
// O0 run whose header said "loss scale dynamic" while its card said no scaling was needed).
import { english, type Translate } from '../l10n';

/** fp16 levels: the only ones where a loss scale protects the gradients. */
const FP16_LEVELS: ReadonlySet<string> = new Set(['O1', 'O2', 'O3']);

export interface AmpScaling {
  /** Loss scaling protects this run's gradients (an fp16 level with a dynamic or fixed scale). */
  applies: boolean;
  /** The header's AMP text, e.g. `O2, loss scale dynamic` or `O0 (full precision), no loss scaling needed`. */
  summary: string;
  /** When it does not apply: the AMP card's one line saying so. */
  notApplicable?: string;
}

/** `level` and `mode` as run_started.amp gives them (undefined when unknown); `t` words it. */
export function ampScaling(level: string | undefined, mode: string | undefined, t: Translate = english): AmpScaling {
  if (level === undefined)
    return { applies: mode === 'dynamic' || mode === 'fixed', summary: mode ? t('loss scale {0}', mode) : '–' };
  const scaled = mode === 'dynamic' || mode === 'fixed';
  if (!FP16_LEVELS.has(level)) {
    return {
      applies: false,
      summary: t('{0} (full precision), no loss scaling needed', level),
      notApplicable: scaled
        ? t(
            'Loss scaling does not apply: {0} trains in full precision (fp32), so there is no fp16 range to protect (the {1} scale of the spec is not needed).',
            level,
            mode,
          )
        : t(
            'Loss scaling does not apply: {0} trains in full precision (fp32), so there is no fp16 range to protect.',
            level,
          ),
    };
  }
  if (!scaled) return { applies: false, summary: t('{0}, no loss scaling', level) };
  return { applies: true, summary: t('{0}, loss scale {1}', level, mode) };
}
