// framework.ClusterEvent: a change in the cluster that may make an unschedulable pod schedulable. Plugins
// register the events that could undo their own rejections (Kubernetes' EnqueueExtensions), optionally
// with a hint that looks at the objects; the queue moves a pod back only for events one of its rejecting
// plugins registered, as Kubernetes' queueing hints do.

import type { Node, Pod } from './api-types.js';
import type { PodInfo } from './pod-info.js';

export type EventResource = 'Node' | 'Pod';

export type ActionType =
  | 'Add'
  | 'Delete'
  | 'UpdateNodeAllocatable'
  | 'UpdateNodeLabel'
  | 'UpdateNodeTaint'
  | 'UpdateNodeCondition'
  | 'UpdatePodLabel'
  | 'UpdatePodScaleDown'
  | 'UpdatePodTolerations'
  /** Any other update. */
  | 'Update';

/** What happened, with the objects (old is absent for Add, new for Delete). */
export interface ClusterEventOccurrence {
  readonly resource: EventResource;
  readonly action: ActionType;
  readonly oldObj?: Node | Pod;
  readonly newObj?: Node | Pod;
}

export type QueueingHint = 'Queue' | 'QueueSkip';

export interface ClusterEvent {
  readonly resource: EventResource;
  /** The actions that matter; 'All' for every action on the resource. */
  readonly actions: readonly ActionType[] | 'All';
  /** QueueingHintFn: Queue when this occurrence could make the rejected pod fit. Absent: always Queue. */
  readonly hint?: (pod: PodInfo, ev: ClusterEventOccurrence) => QueueingHint;
}

export function eventMatches(reg: ClusterEvent, ev: ClusterEventOccurrence): boolean {
  if (reg.resource !== ev.resource) return false;
  return reg.actions === 'All' || reg.actions.includes(ev.action);
}

/** The update actions a node change amounts to (NodeSchedulingPropertiesChange). */
export function nodeUpdateActions(oldNode: Node, newNode: Node): ActionType[] {
  const out: ActionType[] = [];
  const j = (v: unknown): string => JSON.stringify(v ?? null);
  if (j(oldNode.status?.allocatable) !== j(newNode.status?.allocatable)) out.push('UpdateNodeAllocatable');
  if (j(oldNode.metadata.labels) !== j(newNode.metadata.labels)) out.push('UpdateNodeLabel');
  if (j(oldNode.spec?.taints) !== j(newNode.spec?.taints) || (oldNode.spec?.unschedulable ?? false) !== (newNode.spec?.unschedulable ?? false)) {
    out.push('UpdateNodeTaint');
  }
  return out;
}

/** The update actions an assigned pod's change amounts to. */
export function podUpdateActions(oldPod: Pod, newPod: Pod): ActionType[] {
  const out: ActionType[] = [];
  const j = (v: unknown): string => JSON.stringify(v ?? null);
  if (j(oldPod.metadata.labels) !== j(newPod.metadata.labels)) out.push('UpdatePodLabel');
  if (j(oldPod.spec.tolerations) !== j(newPod.spec.tolerations)) out.push('UpdatePodTolerations');
  if (j(oldPod.spec.containers.map((c) => c.resources?.requests)) !== j(newPod.spec.containers.map((c) => c.resources?.requests))) out.push('UpdatePodScaleDown');
  if (out.length === 0) out.push('Update');
  return out;
}
