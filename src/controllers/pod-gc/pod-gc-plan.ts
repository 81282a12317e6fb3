// What one pass of the pod garbage collector deletes (Kubernetes' pkg/controller/podgc), as a pure
// function of the cached pods and nodes: terminated pods (Succeeded, Failed) beyond the threshold, oldest
// first; pods bound to a node that has been missing for the quarantine; terminating pods never scheduled.
import type { PodObject } from '../node-lifecycle/node-types.js';

export interface PodGcInput {
  readonly pods: readonly PodObject[];
  /** A node the cache knows. */
  nodeKnown(name: string): boolean;
  /** A node missing from the cache for at least the quarantine (checked live by the caller before acting). */
  nodeQuarantined(name: string): boolean;
  /** --terminated-pod-gc-threshold; 0 or less: keep every terminated pod. */
  readonly terminatedThreshold: number;
}

export interface PodGcPlan {
  readonly terminated: PodObject[];
  /** Node name → its pods. */
  readonly orphaned: Map<string, PodObject[]>;
  readonly unscheduledTerminating: PodObject[];
  /** Nodes the pods name that the cache does not know (to start or keep their quarantine). */
  readonly missingNodes: Set<string>;
}

const isTerminated = (p: PodObject): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

export function planPodGc(input: PodGcInput): PodGcPlan {
  const terminatedPods = input.pods.filter(isTerminated);
  let terminated: PodObject[] = [];
  const excess = terminatedPods.length - input.terminatedThreshold;
  if (input.terminatedThreshold > 0 && excess > 0) {
    // Oldest first, by creation time, then name for a stable order (Kubernetes sorts byEvictionAndCreationTimestamp).
    terminated = [...terminatedPods]
      .sort((a, b) => (a.metadata?.creationTimestamp ?? '').localeCompare(b.metadata?.creationTimestamp ?? '') || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))
      .slice(0, excess);
  }
  const orphaned = new Map<string, PodObject[]>();
  const missingNodes = new Set<string>();
  const unscheduledTerminating: PodObject[] = [];
  for (const p of input.pods) {
    const node = p.spec?.nodeName ?? '';
    if (node === '') {
      if (p.metadata?.deletionTimestamp) unscheduledTerminating.push(p);
      continue;
    }
    if (input.nodeKnown(node)) continue;
    missingNodes.add(node);
    if (!input.nodeQuarantined(node)) continue;
    const list = orphaned.get(node) ?? [];
    list.push(p);
    orphaned.set(node, list);
  }
  return { terminated, orphaned, unscheduledTerminating, missingNodes };
}
