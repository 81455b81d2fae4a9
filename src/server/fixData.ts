// What the spec's diagnostics carry for their quick fixes (actions.ts applies them): one module that
// the checks (diagnostics.ts, freezeStages.ts) and the fixes share.
export const SOURCE = 'ascend-run';

/** What a quick fix needs, carried in `Diagnostic.data`. */
export type FixData =
  | { kind: 'renameKey'; path: string; to: string }
  | { kind: 'setValue'; path: string; values: { label: string; value: unknown }[] };
