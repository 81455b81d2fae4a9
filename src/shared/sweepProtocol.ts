// Messages between the Sweep panel (webview/sweep) and the extension host (src/vscode/sweeps/panel.ts).
// The host polls sweep-status and sends the whole checked document as one snapshot; the UI sends
// back the user's clicks. Both sides check what they receive.

// ---- the runner's sweep documents (docs/protocol.md section 7), as src/core/sweeps/client.ts checks them ----

export type SweepState = 'running' | 'completed' | 'stopped' | 'failed' | 'lost';
export type TrialState = 'RUNNING' | 'COMPLETE' | 'PRUNED' | 'FAIL' | 'WAITING';
export type ParamValue = string | number | boolean | null;

export interface SweepStarted {
  sweep_id: string;
  sweep_dir: string;
  pid: number;
  resumed: boolean;
}

export interface SweepCounts {
  complete: number;
  pruned: number;
  fail: number;
  running: number;
  waiting: number;
  counted: number;
}

export interface SweepBest {
  number: number;
  value: number;
  params: Record<string, ParamValue>;
  run_id: string | null;
  run_dir: string | null;
}

export interface Objective {
  metric: string;
  direction: 'maximize' | 'minimize';
}

export interface SweepTrial {
  number: number;
  state: TrialState;
  outcome: string | null;
  params: Record<string, ParamValue>;
  value: number | null;
  run_id: string | null;
  run_dir: string | null;
  pruned_at: number | null;
  /** `[epoch, value]` pairs (value null for NaN/Inf). */
  reported: [number, number | null][];
  /** Why the trial failed or was pruned, in the runner's English. */
  reason: string | null;
  /** The reason's code when it is one of the scheduler's own (`surplus`, `run_stopped`…; docs/sweeps.md). */
  reason_code: string | null;
  /** A failed trial's run error `code` and `params` (runners before them: null): worded by the host. */
  error_code: string | null;
  error_params: Record<string, unknown> | null;
  retry_of: number | null;
}

export interface SweepStatus {
  sweep_id: string;
  sweep_dir: string;
  name: string;
  state: SweepState;
  objective: Objective;
  sampler: string | null;
  pruner: string | null;
  trials_target: number;
  counts: SweepCounts;
  trials: SweepTrial[];
  best: SweepBest | null;
  /** field -> importance (summing to 1), or null before two trials completed. */
  importances: Record<string, number> | null;
  started_at: number | null;
  ended_at: number | null;
}

export interface ListedSweep {
  sweep_id: string;
  sweep_dir: string;
  name: string;
  state: SweepState;
  started_at: number | null;
  ended_at: number | null;
  objective: Objective;
  trials_target: number;
  /** The last `sweep_finished`'s; null while it runs. */
  counts: SweepCounts | null;
  best: SweepBest | null;
}

export interface SweepPanelState {
  /** The target's label, for the header. */
  target: string;
  status: SweepStatus | null;
  /** The last sweep-status error, shown above the last good snapshot. */
  error: string | null;
}

export type SweepHostMessage = { type: 'state'; state: SweepPanelState };

export type SweepUiMessage =
  | { type: 'ready' }
  | { type: 'fineTuneBest' }
  | { type: 'stop' }
  | { type: 'openTable' }
  | { type: 'openTrial'; number: number };

export function isSweepHostMessage(m: unknown): m is SweepHostMessage {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'state';
}

/** The UI's message, or undefined when it is not one this host takes. */
export function validateSweepUiMessage(m: unknown): SweepUiMessage | undefined {
  if (typeof m !== 'object' || m === null) return undefined;
  const x = m as Record<string, unknown>;
  if (x.type === 'ready' || x.type === 'fineTuneBest' || x.type === 'stop' || x.type === 'openTable')
    return { type: x.type };
  if (x.type === 'openTrial' && Number.isSafeInteger(x.number) && (x.number as number) >= 0)
    return { type: 'openTrial', number: x.number as number };
  return undefined;
}
