// What the host sends, folded into the runs the page holds: a snapshot replaces them, an append
// extends one run's columns in place (the charts' derived columns follow, see live.ts).
import type {
  DeviceBlock,
  EvalBlock,
  HostBlock,
  HostMessage,
  RunData,
  StepBlock,
} from '../../src/shared/dashboardProtocol';
import { spanSinks } from './series';

export function pushAll<T>(into: T[], from: readonly T[] | undefined): void {
  if (from) for (const v of from) into.push(v);
}

function appendSteps(a: StepBlock, b: StepBlock): void {
  for (const k of Object.keys(a) as (keyof StepBlock)[]) pushAll(a[k] as unknown[], b[k] as unknown[]);
}

function appendEvals(a: EvalBlock, b: EvalBlock): void {
  for (const k of Object.keys(a) as (keyof EvalBlock)[]) pushAll(a[k] as unknown[], b[k] as unknown[]);
}

function appendHost(a: HostBlock, b: HostBlock): void {
  for (const k of Object.keys(a) as (keyof HostBlock)[]) pushAll(a[k] as unknown[], b[k] as unknown[]);
}

function appendDevices(a: DeviceBlock, b: DeviceBlock): void {
  const before = a.steps.length;
  pushAll(a.steps, b.steps);
  pushAll(a.t, b.t);
  const ids = new Set([...Object.keys(a.devices), ...Object.keys(b.devices)]);
  for (const id of ids) {
    // A device that appears (or drops out) later gets nulls for the rows it missed.
    const cur = (a.devices[id] ??= { util: [], hbmUsedMb: [], hbmTotalMb: [], tempC: [], powerW: [] });
    const add = b.devices[id];
    for (const k of Object.keys(cur) as (keyof typeof cur)[]) {
      while (cur[k].length < before) cur[k].push(null);
      if (add) pushAll(cur[k], add[k]);
      while (cur[k].length < a.steps.length) cur[k].push(null);
    }
  }
}

/** A snapshot's runs as the page holds them: each sink row spread over the steps it covers. */
export function ingestRuns(runs: RunData[]): RunData[] {
  return runs.map((r) => (r.steps.firstStep ? { ...r, steps: spanSinks(r.steps) } : r));
}

/** Extends one run with an append's rows (new header and AMP health, notices added). */
export function applyAppend(run: RunData, m: Extract<HostMessage, { type: 'append' }>): void {
  run.header = m.header;
  run.amp = m.amp;
  if (m.steps) {
    appendSteps(run.steps, spanSinks(m.steps)); // a sink's row drawn over its steps
    run.totalStepRows += m.steps.steps.length;
  }
  if (m.evals) appendEvals(run.evals, m.evals);
  if (m.devices) appendDevices(run.devices, m.devices);
  if (m.host) {
    if (run.host) appendHost(run.host, m.host);
    else run.host = m.host;
  }
  if (m.config) run.config = m.config;
  pushAll(run.notices, m.notices);
  if (m.marks) run.marks = [...(run.marks ?? []), ...m.marks];
}
