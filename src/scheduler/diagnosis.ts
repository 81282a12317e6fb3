// The structured diagnosis `why` reads: for an unschedulable pod, the FitError message, the reason
// histogram, and per node which plugin said no with the numbers behind it; and a cluster-level
// feasibility count — how many copies of a pod (a controller's pending replicas) could fit at all in the
// free capacity of the nodes that pass the pod's non-resource filters. Plain JSON-able data, bounded in
// size (docs/scheduler.md gives the shape).

import { CycleState } from './framework.js';
import type { FitError } from './fit-error.js';
import { reasonHistogram } from './fit-error.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';
import type { Profile } from './profile.js';
import type { Snapshot } from './snapshot.js';

export interface NodeRejection {
  readonly node: string;
  readonly plugin: string;
  readonly code: string;
  readonly reasons: readonly string[];
  /** The plugin's numbers: insufficient resources (requested, used, allocatable), the taint, the skew... */
  readonly details?: Readonly<Record<string, unknown>>;
}

export interface SchedulingDiagnosis {
  readonly pod: string;
  readonly message: string;
  readonly numAllNodes: number;
  /** reason → how many nodes gave it (the message's histogram, as data). */
  readonly reasons: Readonly<Record<string, number>>;
  /** plugin → how many nodes it rejected. */
  readonly plugins: Readonly<Record<string, number>>;
  /** At most `maxNodes` rejections, in node order; `nodesOmitted` says how many more there were. */
  readonly nodes: readonly NodeRejection[];
  readonly nodesOmitted: number;
  readonly nominatedNodeName?: string;
  readonly victims?: readonly string[];
  /** For a pod with a controller: how many of its pending siblings could fit at all. */
  readonly feasibility?: Feasibility;
}

export function buildDiagnosis(
  err: FitError,
  opts: { readonly maxNodes?: number; readonly nominatedNodeName?: string; readonly victims?: readonly PodInfo[] } = {},
): SchedulingDiagnosis {
  const max = opts.maxNodes ?? 100;
  const d = err.diagnosis;
  const plugins: Record<string, number> = {};
  const nodes: NodeRejection[] = [];
  for (const [name, st] of d.nodeToStatus) {
    plugins[st.plugin] = (plugins[st.plugin] ?? 0) + 1;
    if (nodes.length < max) {
      nodes.push({ node: name, plugin: st.plugin, code: st.code, reasons: st.reasons, ...(st.details !== undefined ? { details: st.details } : {}) });
    }
  }
  return {
    pod: err.podKey,
    message: err.message,
    numAllNodes: err.numAllNodes,
    reasons: Object.fromEntries(reasonHistogram(d, err.numAllNodes)),
    plugins,
    nodes,
    nodesOmitted: d.nodeToStatus.size - nodes.length,
    ...(opts.nominatedNodeName !== undefined ? { nominatedNodeName: opts.nominatedNodeName } : {}),
    ...(opts.victims !== undefined ? { victims: opts.victims.map((v) => v.key) } : {}),
  };
}

export interface Feasibility {
  /** How many pods were asked about (a controller's pending replicas). */
  readonly pending: number;
  /** How many of them could be placed at once, given free capacity now. */
  readonly couldFit: number;
  /** Copies that fit on all eligible nodes together. */
  readonly capacity: number;
  /** Nodes that pass every filter but resources, ports and spread. */
  readonly eligibleNodes: number;
  /** plugin → nodes it excludes outright (taints, affinity, cordon). */
  readonly excludedBy: Readonly<Record<string, number>>;
  /** resource → on how many eligible nodes it is what limits the count. */
  readonly limitedBy: Readonly<Record<string, number>>;
  /** What one pod requests (cpu in millicores, memory in bytes). */
  readonly perPod: Readonly<Record<string, number>>;
}

// The filters that depend on the pod's own requests and neighbours are what the count models; the
// others decide eligibility.
const countedPlugins = new Set(['NodeResourcesFit', 'NodePorts', 'PodTopologySpread']);

function copiesOn(pod: PodInfo, ni: NodeInfo): { n: number; by: string } {
  const req = pod.requests.requests;
  let n = ni.allocatable.allowedPodNumber - ni.pods.length;
  let by = 'pods';
  const limit = (name: string, free: number, per: number): void => {
    if (per <= 0) return;
    const c = Math.floor(free / per);
    if (c < n) {
      n = c;
      by = name;
    }
  };
  limit('cpu', ni.allocatable.milliCPU - ni.requested.milliCPU, req.milliCPU);
  limit('memory', ni.allocatable.memory - ni.requested.memory, req.memory);
  limit('ephemeral-storage', ni.allocatable.ephemeralStorage - ni.requested.ephemeralStorage, req.ephemeralStorage);
  for (const [name, v] of req.scalar ?? []) limit(name, (ni.allocatable.scalar?.get(name) ?? 0) - (ni.requested.scalar?.get(name) ?? 0), v);
  if (pod.hostPorts.length > 0) {
    if (pod.hostPorts.some((p) => ni.usedPorts.conflicts(p))) return { n: 0, by: 'hostPort' };
    if (n > 1) {
      n = 1;
      by = 'hostPort';
    }
  }
  return { n: Math.max(0, n), by };
}

/** How many of `pending` copies of the pod could fit in the cluster's free capacity now. */
export function feasibility(profile: Profile, pod: PodInfo, snapshot: Snapshot, pending: number): Feasibility {
  const excludedBy: Record<string, number> = {};
  const limitedBy: Record<string, number> = {};
  let capacity = 0;
  let eligible = 0;
  const state = new CycleState();
  profile.runPreFilter(state, pod, snapshot);
  for (const c of countedPlugins) state.skipFilter.add(c);
  for (const ni of snapshot.list) {
    const st = profile.runFilter(state, pod, ni);
    if (st !== null) {
      excludedBy[st.plugin] = (excludedBy[st.plugin] ?? 0) + 1;
      continue;
    }
    eligible++;
    const { n, by } = copiesOn(pod, ni);
    capacity += n;
    if (n < pending) limitedBy[by] = (limitedBy[by] ?? 0) + 1;
  }
  return { pending, couldFit: Math.min(pending, capacity), capacity, eligibleNodes: eligible, excludedBy, limitedBy, perPod: pod.requests.requests.toJSON() };
}
