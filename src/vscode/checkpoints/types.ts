// What the parts of the Checkpoints feature share: the refs and tree nodes, one run's loaded
// checkpoints, and what the actions and the explorer read of the view (CheckpointSource), so
// that they depend on this interface and not on the tree view's module.
import type * as vscode from 'vscode';
import type { RunCheckpoints } from '../../core/checkpoints/runInfo';
import type { RunRecord } from '../../core/runs/runIndex';
import type { RunRef } from '../runMonitor';

export interface CkptRef extends RunRef {
  /** The manifest `file`, relative to the run directory. */
  file: string;
}

export type CkptNode =
  | ({ kind: 'run' } & RunRef)
  | ({ kind: 'source' } & RunRef)
  | ({ kind: 'ckpt' } & CkptRef)
  | ({ kind: 'export'; exportFile: string } & CkptRef)
  | ({ kind: 'problem'; label: string; message: string } & RunRef)
  | ({ kind: 'message'; text: string; error: boolean } & RunRef);

export interface Loaded {
  info?: RunCheckpoints;
  /** file -> why it is unusable (from `verify`); empty when verify is not available. */
  problems: Map<string, string>;
  error?: string;
  loading?: Promise<void>;
  /** What the run's live view looked like at load time: a change reloads (a new checkpoint). */
  stamp: string;
}

/** The runs' checkpoints as the Checkpoints view loads and caches them (view.ts implements it). */
export interface CheckpointSource {
  record(ref: RunRef): RunRecord | undefined;
  /** The run's checkpoints, loading them (once at a time) if needed. */
  load(ref: RunRef): Promise<Loaded>;
  /** Cached info without loading. */
  cached(ref: RunRef): Loaded | undefined;
  /** Forgets what was loaded (all runs, or one) and redraws; `reverify` hashes the files again. */
  refresh(ref?: RunRef, reverify?: boolean): void;
  /** Fires when anything loaded changes. */
  readonly onDidChangeTreeData: vscode.Event<unknown>;
}

export const TIMEOUT_MS = 120_000;
/** eval and export load MindSpore and run the network: give them longer. */
export const LONG_TIMEOUT_MS = 30 * 60_000;
