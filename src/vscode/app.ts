// What commands and the wizard work with: the lifetime owner and the live parts.
import type { CheckpointsView } from './checkpoints';
import type { Ctx } from './context';
import type { RunMonitor } from './runMonitor';
import type { RunsView } from './runs';
import type { TargetsView } from './targets';

export interface App {
  ctx: Ctx;
  targets: TargetsView;
  runs: RunsView;
  monitor: RunMonitor;
  /** The Checkpoints view, once created (its commands need it). */
  checkpoints?: CheckpointsView;
}
