// The sweeps each target has (sweep-ls, refreshed with the runs' `ls`), with a fresher
// sweep-status for the running ones (sweep-ls has no counts or best while a sweep runs).
import type { ListedSweep, SweepStatus } from '../../shared/sweepProtocol';
import { summaryOf, type SweepSummary } from './grouping';

export class SweepStore {
  private readonly listed = new Map<string, ListedSweep[]>();
  private readonly statuses = new Map<string, SweepStatus>();

  setListing(targetId: string, sweeps: readonly ListedSweep[]): void {
    this.listed.set(targetId, [...sweeps]);
  }

  setStatus(targetId: string, status: SweepStatus): void {
    this.statuses.set(`${targetId}\u0000${status.sweep_id}`, status);
  }

  status(targetId: string, sweepId: string): SweepStatus | undefined {
    return this.statuses.get(`${targetId}\u0000${sweepId}`);
  }

  summaries(targetId: string): SweepSummary[] {
    return (this.listed.get(targetId) ?? []).map((l) => summaryOf(l, this.status(targetId, l.sweep_id)));
  }

  get(targetId: string, sweepId: string): SweepSummary | undefined {
    return this.summaries(targetId).find((s) => s.sweep_id === sweepId);
  }
}
