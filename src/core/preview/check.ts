// The wizard summary's data check: a thumbnail-free `preview` of the chosen folder, run while the
// user reads the summary, remembered per target and folder so going back and forth does not rescan.
import { english, type Translate } from '../l10n';
import { PreviewFormatError, previewSummary, toPreviewView } from './model';

/** Where one folder's check is: running, answered (counts and problems in one line each), or failed. */
export type DataCheck =
  | { state: 'checking' }
  | { state: 'done'; counts: string; problems: string; clean: boolean }
  | { state: 'failed'; message: string };

/** The check of a runner answer (a `preview` document); a malformed one is a failure, not a throw. */
export function dataCheckOf(raw: unknown, t: Translate = english): DataCheck {
  try {
    const v = toPreviewView(raw, t);
    const s = previewSummary(v, t);
    return { state: 'done', counts: s.counts, problems: s.problems, clean: v.problems.length === 0 };
  } catch (e) {
    if (e instanceof PreviewFormatError) return { state: 'failed', message: e.message };
    throw e;
  }
}

/** Folders remembered at once; the oldest goes first (a session rarely picks more). */
const MAX_ENTRIES = 16;

export class DataCheckCache {
  private readonly entries = new Map<string, { check: DataCheck; done: Promise<DataCheck> }>();

  /** `t`: the language of the counts and problems (the wizard passes vscode.l10n.t). */
  constructor(private readonly t: Translate = english) {}

  /**
   * The check of `key` now, and a promise of its end. The first call starts `run` (the runner's
   * `preview` answer); later calls share it. A failed check is forgotten once it ends, so the next
   * summary tries again (the folder may have been fixed, or the target come back).
   */
  check(key: string, run: () => Promise<unknown>): { now: DataCheck; done: Promise<DataCheck> } {
    const known = this.entries.get(key);
    if (known) return { now: known.check, done: known.done };
    const entry: { check: DataCheck; done: Promise<DataCheck> } = {
      check: { state: 'checking' },
      done: Promise.resolve({ state: 'checking' }),
    };
    entry.done = Promise.resolve()
      .then(run)
      .then(
        (raw) => dataCheckOf(raw, this.t),
        (e: unknown): DataCheck => ({
          state: 'failed',
          message: e instanceof Error ? e.message : String(e),
        }),
      )
      .then((c) => {
        entry.check = c;
        if (c.state === 'failed' && this.entries.get(key) === entry) this.entries.delete(key);
        return c;
      });
    this.entries.set(key, entry);
    while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    return { now: entry.check, done: entry.done };
  }
}
