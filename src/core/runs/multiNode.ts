// A run on several machines (`device.nodes`): the runner's `launch` on each node with its node
// rank, one master port and one run id. The master (node 0) goes first: it runs msrun's scheduler,
// picks the port (`nodes`, on the master, where the port must be free) and names the run; the
// other nodes join it. Only the master's run directory gets the run's events (rank 0 writes them).
import { controlRun, launchRun, runnerArgs, runRunner, type LaunchResult, type NodePlan } from '../targets/runnerCli';
import type { Target } from '../targets/target';
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
export class NodeLaunchError extends Error {
  constructor(
    message: string,
    readonly node: string,
    readonly started: readonly NodeRun[],
  ) {
    super(message);
    this.name = 'NodeLaunchError';
  }
}

export interface LaunchNodesOptions {
  timeoutMs?: number;
  report?: (step: string) => void;
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
    throw new Error(
      `the spec names ${plan.nodes.length} node(s) in device.nodes, but ${sites.length} target(s) were given`,
    );
  }
  const masterPort = plan.master_port;
  opts.report?.(`starting node 0 (${master.label}, master, port ${masterPort})…`);
  const first = await launchRun(master.target, master.specPath, master.runsRoot, { masterPort, timeoutMs });
  const runs: NodeRun[] = [{ ...first, label: master.label, nodeRank: 0 }];
  for (const [i, site] of others.entries()) {
    const nodeRank = i + 1;
    opts.report?.(`starting node ${nodeRank} (${site.label})…`);
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
      const why = e instanceof Error ? e.message : String(e);
      throw new NodeLaunchError(
        `node ${nodeRank} (${site.label}) did not start: ${why}; the ${runs.length} node(s) already started were asked to stop`,
        site.label,
        runs,
      );
    }
  }
  return { masterPort, runs };
}
