// The one place that decides whether loss scaling applies to a run and how the run's AMP set-up is
// worded: the dashboard header and the AMP health card both read it, so they cannot disagree (an
// O0 run whose header said "loss scale dynamic" while its card said no scaling was needed).

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

/** `level` and `mode` as run_started.amp gives them (undefined when unknown). */
export function ampScaling(level: string | undefined, mode: string | undefined): AmpScaling {
  if (level === undefined)
    return { applies: mode === 'dynamic' || mode === 'fixed', summary: mode ? `loss scale ${mode}` : '–' };
  const scaled = mode === 'dynamic' || mode === 'fixed';
  if (!FP16_LEVELS.has(level)) {
    return {
      applies: false,
      summary: `${level} (full precision), no loss scaling needed`,
      notApplicable: `Loss scaling does not apply: ${level} trains in full precision (fp32), so there is no fp16 range to protect${scaled ? ` (the ${mode} scale of the spec is not needed)` : ''}.`,
    };
  }
  if (!scaled) return { applies: false, summary: `${level}, no loss scaling` };
  return { applies: true, summary: `${level}, loss scale ${mode}` };
}
