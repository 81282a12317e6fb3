// NodeResourcesFit: the pod's requests (containers' sum, the init containers' peak, overhead) must fit
// in the node's allocatable minus what its pods (observed and assumed) request, and a pod slot must be
// free. Score is LeastAllocated over cpu and memory (weight 1 each), on non-zero requests.

import type { ClusterEvent } from '../cluster-event.js';
import type { CycleState, FilterPlugin, ScorePlugin } from '../framework.js';
import { maxNodeScore } from '../framework.js';
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';
import { unschedulable } from '../status.js';
import type { Status } from '../status.js';

/** One resource the node lacks, with the numbers `why` shows (cpu in millicores, memory in bytes). */
export interface InsufficientResource {
  readonly resource: string;
  readonly reason: string;
  readonly requested: number;
  readonly used: number;
  readonly allocatable: number;
}

/** fitsRequest, in Kubernetes' order: pods, cpu, memory, ephemeral-storage, then extended resources. */
export function insufficientResources(pod: PodInfo, node: NodeInfo): InsufficientResource[] {
  const out: InsufficientResource[] = [];
  const alloc = node.allocatable;
  if (node.pods.length + 1 > alloc.allowedPodNumber) {
    out.push({ resource: 'pods', reason: 'Too many pods', requested: 1, used: node.pods.length, allocatable: alloc.allowedPodNumber });
  }
  const req = pod.requests.requests;
  if (req.isZero()) return out;
  const used = node.requested;
  if (req.milliCPU > 0 && req.milliCPU > alloc.milliCPU - used.milliCPU) {
    out.push({ resource: 'cpu', reason: 'Insufficient cpu', requested: req.milliCPU, used: used.milliCPU, allocatable: alloc.milliCPU });
  }
  if (req.memory > 0 && req.memory > alloc.memory - used.memory) {
    out.push({ resource: 'memory', reason: 'Insufficient memory', requested: req.memory, used: used.memory, allocatable: alloc.memory });
  }
  if (req.ephemeralStorage > 0 && req.ephemeralStorage > alloc.ephemeralStorage - used.ephemeralStorage) {
    out.push({ resource: 'ephemeral-storage', reason: 'Insufficient ephemeral-storage', requested: req.ephemeralStorage, used: used.ephemeralStorage, allocatable: alloc.ephemeralStorage });
  }
  for (const [name, v] of req.scalar ?? []) {
    if (v === 0) continue;
    const a = alloc.scalar?.get(name) ?? 0;
    const u = used.scalar?.get(name) ?? 0;
    if (v > a - u) out.push({ resource: name, reason: `Insufficient ${name}`, requested: v, used: u, allocatable: a });
  }
  return out;
}

function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.trunc(((capacity - requested) * maxNodeScore) / capacity);
}

export class NodeResourcesFit implements FilterPlugin, ScorePlugin {
  readonly name = 'NodeResourcesFit';

  events(): readonly ClusterEvent[] {
    return [
      { resource: 'Pod', actions: ['Delete', 'UpdatePodScaleDown'] },
      { resource: 'Node', actions: ['Add', 'UpdateNodeAllocatable'] },
    ];
  }

  filter(_state: CycleState, pod: PodInfo, node: NodeInfo): Status | null {
    const alloc = node.allocatable;
    const req = pod.requests.requests;
    // The common case without allocation: everything fits.
    if (
      node.pods.length + 1 <= alloc.allowedPodNumber &&
      req.scalar === undefined &&
      req.milliCPU <= alloc.milliCPU - node.requested.milliCPU &&
      req.memory <= alloc.memory - node.requested.memory &&
      req.ephemeralStorage <= alloc.ephemeralStorage - node.requested.ephemeralStorage
    ) {
      return null;
    }
    const ins = insufficientResources(pod, node);
    if (ins.length === 0) return null;
    return unschedulable(ins.map((r) => r.reason), { insufficient: ins });
  }

  score(_state: CycleState, pod: PodInfo, node: NodeInfo): number {
    // LeastAllocated, resources cpu and memory with weight 1 each; a resource the node lacks is left out.
    let sum = 0;
    let weights = 0;
    const a = node.allocatable;
    if (a.milliCPU !== 0) {
      sum += leastRequestedScore(node.nonZeroMilliCPU + pod.requests.nonZeroMilliCPU, a.milliCPU);
      weights++;
    }
    if (a.memory !== 0) {
      sum += leastRequestedScore(node.nonZeroMemory + pod.requests.nonZeroMemory, a.memory);
      weights++;
    }
    return weights === 0 ? 0 : Math.trunc(sum / weights);
  }
}
