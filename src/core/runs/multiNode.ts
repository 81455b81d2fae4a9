// A run on several machines (`device.nodes`): the runner's `launch` on each node with its node
// rank, one master port and one run id. The master (node 0) goes first: it runs msrun's scheduler,
// picks the port (`nodes`, on the master, where the port must be free) and names the run; the
// other nodes join it. Only the master's run directory gets the run's events (rank 0 writes them).
import {
  controlRun,
  launchRun,
  RunnerError,
  runnerArgs,
  runRunner,
  type LaunchResult,
  type NodePlan,
} from '../targets/runnerCli';
import type { Target } from '../targets/target';
import { english, WordedError, wordedErrorText, type Translate } from '../l10n';
import { wordedRunnerError } from './runnerErrors';
import { nodeAddress, type TargetDef } from '../targets/model';

/** The names a spec gives its machines; empty or one name is a one-machine run. */
export function specNodes(spec: unknown): string[] {
  const device = (spec as { device?: { nodes?: unknown } } | undefined)?.device;
  return Array.isArray(device?.nodes) ? device.nodes.filter((n): n is string => typeof n === 'string') : [];
}

/**
 * The targets of a multi-node spec, in its node order: the first node is `master` (the target the
 * user launches on), every other name must be an SSH target's address or alias.
 */
export function nodeTargets(
  nodes: readonly string[],
  master: TargetDef,
  targets: readonly TargetDef[],
): { found: TargetDef[] } | { missing: string[] } {
  const found: TargetDef[] = [master];
  const missing: string[] = [];
  for (const name of nodes.slice(1)) {
    const def = targets.find(
      (t) => t.id !== master.id && t.kind === 'ssh' && (nodeAddress(t) === name || t.ssh?.dest.host === name),
    );
    if (def) found.push(def);
    else missing.push(name);
  }
  return missing.length ? { missing } : { found };
}

/** One node's part: where its copy of the spec is and where its runs go. */
export interface NodeSite {
  label: string;
  target: Target;
  specPath: string;
  runsRoot: string;
}

export interface NodeRun extends LaunchResult {
  label: string;
  nodeRank: number;
}

/** A node that could not be started; the nodes already started were asked to stop. */
export class NodeLaunchError extends WordedError {
  constructor(
    words: (t: Translate) => string,
    readonly node: string,
    readonly started: readonly NodeRun[],
  ) {
    super(words);
    this.name = 'NodeLaunchError';
  }
}

export interface LaunchNodesOptions {
  timeoutMs?: number;
  /** Words the steps `report` is given (English by default). */
  report?: (step: string) => void;
  t?: Translate;
}

/** Starts every node of the run, master first; the runs, in node order, and the shared port. */
export async function launchNodes(
  sites: readonly NodeSite[],
  opts: LaunchNodesOptions = {},
): Promise<{ masterPort: number; runs: NodeRun[] }> {
  const [master, ...others] = sites;
  if (!master) throw new Error('a multi-node run needs at least one node');
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const plan = await runRunner<NodePlan>(master.target, runnerArgs.nodes(master.specPath, master.runsRoot), {
    timeoutMs,
  });
  if (plan.nodes.length !== sites.length) {
    const [named, given] = [plan.nodes.length, sites.length];
    throw new WordedError((t) =>
      t('the spec names {0} node(s) in device.nodes, but {1} target(s) were given', named, given),
    );
  }
  const masterPort = plan.master_port;
  const t = opts.t ?? english;
  opts.report?.(t('starting node 0 ({0}, master, port {1})…', master.label, masterPort));
  const first = await launchRun(master.target, master.specPath, master.runsRoot, { masterPort, timeoutMs });
  const runs: NodeRun[] = [{ ...first, label: master.label, nodeRank: 0 }];
  for (const [i, site] of others.entries()) {
    const nodeRank = i + 1;
    opts.report?.(t('starting node {0} ({1})…', nodeRank, site.label));
    try {
      const r = await launchRun(site.target, site.specPath, site.runsRoot, {
        nodeRank,
        masterPort,
        runId: first.run_id,
        timeoutMs,
      });
      runs.push({ ...r, label: site.label, nodeRank });
    } catch (e) {
      // The started nodes would wait for this one until msrun's cluster timeout: ask them to stop.
      // A run still in set-up takes the stop when set-up ends (a missing node ends it too, with an
      // error), so the runner is not made to wait for it here: the request stays asked.
      await Promise.allSettled(
        runs.map((r) => controlRun(sites[r.nodeRank].target, r.run_dir, 'stop', { waitS: 5, timeoutMs: 60_000 })),
      );
      // The node's own error in the user's language too: the runner's by its code, or core's words.
      const why = (t: Translate) =>
        (e instanceof RunnerError && e.info ? wordedRunnerError(e.info, { t })?.message : undefined) ??
        wordedErrorText(e, t) ??
        (e instanceof Error ? e.message : String(e));
      const started = runs.length;
      throw new NodeLaunchError(
        (t) =>
          t(
            'node {0} ({1}) did not start: {2}; the {3} node(s) already started were asked to stop',
            nodeRank,
            site.label,
            why(t),
            started,
          ),
        site.label,
        runs,
      );
    }
  }
  return { masterPort, runs };
}
