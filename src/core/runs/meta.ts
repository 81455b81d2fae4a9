// Turning what the user typed into a `meta` change (the runner checks and stores it; see
// docs/protocol.md, `meta`): the glue only asks and shows.
import type { MetaChange } from '../targets/runnerCli';
import type { RunMeta } from './runIndex';
import { runnerErrorText } from './runnerErrors';
import { ENGLISH_WORDING, type Wording } from './wording';

/**
 * Tags typed as one line (`baseline, lr-sweep` or `#a #b`) against the run's current tags: the
 * ones to add and the ones to remove, so that the run ends with exactly the typed tags (in the
 * typed order for new ones; the runner keeps the order of those that stay).
 */
export function tagChange(current: readonly string[], typed: string): Pick<MetaChange, 'tag' | 'untag'> {
  const wanted: string[] = [];
  for (const raw of typed.split(/[,\s]+/)) {
    const t = raw.replace(/^#/, '').trim();
    if (t && !wanted.includes(t)) wanted.push(t);
  }
  return {
    tag: wanted.filter((t) => !current.includes(t)),
    untag: current.filter((t) => !wanted.includes(t)),
  };
}

/** The tags as the Tag Run box shows them to edit. */
export function tagsText(meta: RunMeta | undefined): string {
  return (meta?.tags ?? []).join(', ');
}

/** A refused value (`bad_input` with `field`), as the input box's message, worded from its code when known. */
export function metaRefusal(
  info: { kind?: unknown; code?: unknown; params?: unknown; message?: unknown; field?: unknown } | undefined,
  w: Wording = ENGLISH_WORDING,
): string | undefined {
  if (info?.kind !== 'bad_input' || typeof info.message !== 'string') return undefined;
  const message = runnerErrorText(info, w)?.message ?? info.message;
  return typeof info.field === 'string' ? `${info.field}: ${message}` : message;
}
