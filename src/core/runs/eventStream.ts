import type { RunEvent } from '../../shared/eventsProtocol';

/** Called when events were skipped: `expected` is the seq that should have come next. */
export type GapHandler = (expected: number, got: number) => void;

/**
 * Orders one run's events across reconnects. Events are delivered at most once (seq <= lastSeq
 * is a duplicate, e.g. a resent tail) and a gap is reported rather than hidden, so that
 * "reconnect with --since lastSeq" can be checked to neither double nor lose anything.
 */
export class EventSequencer {
  private last: number;
  private gapCount = 0;

  constructor(
    lastSeq = 0,
    private readonly onGap: GapHandler = () => {},
  ) {
    this.last = lastSeq;
  }

  /** The highest seq delivered: what to pass as `--since` when reconnecting. */
  get lastSeq(): number {
    return this.last;
  }

  /** How many gaps were seen. */
  get gaps(): number {
    return this.gapCount;
  }

  /**
   * True when the event is new and should be delivered. Also takes the envelope of an event that
   * is then skipped (a payload of the wrong types), so that it is neither a gap nor fetched again.
   */
  accept(event: Pick<RunEvent, 'seq'>): boolean {
    if (event.seq <= this.last) return false;
    if (event.seq > this.last + 1) {
      this.gapCount++;
      this.onGap(this.last + 1, event.seq);
    }
    this.last = event.seq;
    return true;
  }
}
