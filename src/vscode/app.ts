// What the general commands, the wizard, launches, tasks, dashboards and the spec language work
// with: the lifetime owner and the live parts, all made before it. The Checkpoints view is not in
// it: its commands get their own host (checkpoints/commands.ts), so nothing here is optional.
import type { Ctx } from './context';
import type { RunMonitor } from './runMonitor';
import type { RunsView } from './runs';
import type { TargetsView } from './targets';

export interface App {
  ctx: Ctx;
  targets: TargetsView;
  runs: RunsView;
  monitor: RunMonitor;
}
