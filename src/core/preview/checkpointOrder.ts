// The order Classify with Checkpoint… offers checkpoints in: the newest run first (the model the
// user just trained), its best checkpoint first, then its others newest first; older runs after.
import type { CheckpointEntry } from '../checkpoints/manifest';

export interface RunCheckpoints<R> {
  run: R;
  /** unix seconds */
  startedAt: number;
  checkpoints: readonly Pick<CheckpointEntry, 'file' | 'best' | 'order'>[];
}

export interface OrderedCheckpoint<R> {
  run: R;
  file: string;
  best: boolean;
}

export function classifyPickOrder<R>(runs: readonly RunCheckpoints<R>[]): OrderedCheckpoint<R>[] {
  return [...runs]
    .sort((a, b) => b.startedAt - a.startedAt)
    .flatMap((r) =>
      [...r.checkpoints]
        .sort((a, b) => Number(b.best) - Number(a.best) || b.order - a.order)
        .map((c) => ({ run: r.run, file: c.file, best: c.best })),
    );
}
