// Which of `validate --preflight`'s warnings the Start wizard asks about before it launches. The
// run writes every one of them as a `warning` event anyway (and the run monitor shows those); the
// wizard stops only for the ones a user would change their choices for, such as an NPU that another
// job is using, not for notes such as "CPU cannot sink" that every CPU run would repeat.

import { ENGLISH_WORDING, warningText, type Wording } from './runnerCodes';

/** Warning codes worth a question before launch (docs/protocol.md, section 3). */
export const ASK_BEFORE_LAUNCH: ReadonlySet<string> = new Set([
  'npu_busy',
  'npu_low_hbm',
  'cann_mismatch',
  'ascend_unavailable',
]);

export interface PreflightWarning {
  code: string;
  message: string;
  details?: unknown;
}

/** The warnings of `validate --preflight`'s output, tolerant of junk (an older runner prints none). */
export function preflightWarnings(output: unknown): PreflightWarning[] {
  const w =
    (typeof output === 'object' && output !== null ? (output as { warnings?: unknown }).warnings : undefined) ?? [];
  if (!Array.isArray(w)) return [];
  return w.flatMap((x) => {
    const o = (typeof x === 'object' && x !== null ? x : {}) as Record<string, unknown>;
    return typeof o.code === 'string' && typeof o.message === 'string'
      ? [{ code: o.code, message: o.message, details: o.details }]
      : [];
  });
}

/** The ones to ask about, as lines for a dialog, worded in the user's language when the code is known. */
export function preflightQuestions(output: unknown, words: Wording = ENGLISH_WORDING): string[] {
  return preflightWarnings(output)
    .filter((w) => ASK_BEFORE_LAUNCH.has(w.code))
    .map((w) => `${w.code}: ${warningText(w, words)}`);
}
