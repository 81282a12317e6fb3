// The parts of core/v1 Pod and Node that the scheduler reads, as plain JSON shapes. Objects arrive from
// the API server already decoded, validated and defaulted; the scheduler never writes these types back
// except through the binding and status subresources.

import type { LabelSelector } from '../api/label-selector.js';
import type { ObjectMeta as ApiObjectMeta } from '../api/object-meta.js';

export type Labels = Readonly<Record<string, string>>;
export type ResourceList = Readonly<Record<string, string | number>>;

/** The scheduler reads objects only, and always ones with a name. */
export type ObjectMeta = Readonly<ApiObjectMeta> & { readonly name: string };

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: TaintEffect | string;
}

export interface Toleration {
  readonly key?: string;
  readonly operator?: 'Exists' | 'Equal' | string;
  readonly value?: string;
  readonly effect?: TaintEffect | string;
  readonly tolerationSeconds?: number | null;
}

export interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | string;
  readonly values?: readonly string[] | null;
}

export interface NodeSelectorTerm {
  readonly matchExpressions?: readonly NodeSelectorRequirement[] | null;
  readonly matchFields?: readonly NodeSelectorRequirement[] | null;
}

export interface NodeSelector {
  readonly nodeSelectorTerms: readonly NodeSelectorTerm[];
}

export interface PreferredSchedulingTerm {
  readonly weight: number;
  readonly preference: NodeSelectorTerm;
}

export interface NodeAffinity {
  readonly requiredDuringSchedulingIgnoredDuringExecution?: NodeSelector | null;
  readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly PreferredSchedulingTerm[] | null;
}

export interface Affinity {
  readonly nodeAffinity?: NodeAffinity | null;
}

export interface ContainerPort {
  readonly containerPort: number;
  readonly hostPort?: number;
  readonly hostIP?: string;
  readonly protocol?: string;
  readonly name?: string;
}

export interface Container {
  readonly name: string;
  readonly resources?: { readonly requests?: ResourceList | null; readonly limits?: ResourceList | null } | null;
  readonly ports?: readonly ContainerPort[] | null;
  /** Only init containers: "Always" makes it a sidecar that runs beside the main containers. */
  readonly restartPolicy?: string;
}

export interface TopologySpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway' | string;
  readonly labelSelector?: LabelSelector | null;
  readonly minDomains?: number | null;
  readonly nodeAffinityPolicy?: 'Honor' | 'Ignore' | string | null;
  readonly nodeTaintsPolicy?: 'Honor' | 'Ignore' | string | null;
  readonly matchLabelKeys?: readonly string[] | null;
}

export interface PodSpec {
  readonly nodeName?: string;
  readonly nodeSelector?: Labels | null;
  readonly affinity?: Affinity | null;
  readonly tolerations?: readonly Toleration[] | null;
  readonly containers: readonly Container[];
  readonly initContainers?: readonly Container[] | null;
  readonly overhead?: ResourceList | null;
  readonly topologySpreadConstraints?: readonly TopologySpreadConstraint[] | null;
  readonly priority?: number | null;
  readonly priorityClassName?: string;
  readonly preemptionPolicy?: 'PreemptLowerPriority' | 'Never' | string | null;
  readonly schedulerName?: string;
  readonly schedulingGates?: readonly { readonly name: string }[] | null;
}

export interface PodCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

export interface PodStatus {
  readonly phase?: string;
  readonly conditions?: readonly PodCondition[] | null;
  readonly nominatedNodeName?: string;
  readonly startTime?: string;
}

export interface Pod {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
  readonly spec: PodSpec;
  readonly status?: PodStatus | null;
}

export interface NodeSpec {
  readonly unschedulable?: boolean;
  readonly taints?: readonly Taint[] | null;
}

export interface NodeStatus {
  readonly capacity?: ResourceList | null;
  readonly allocatable?: ResourceList | null;
}

export interface Node {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
  readonly spec?: NodeSpec | null;
  readonly status?: NodeStatus | null;
}

/** "namespace/name", the key the queue, the cache and the diagnoses use for a pod. */
export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}

/** corev1helpers.PodPriority: the resolved priority, 0 when admission set none. */
export function podPriority(pod: Pod): number {
  return pod.spec.priority ?? 0;
}

export const labelHostname = 'kubernetes.io/hostname';
export const labelTopologyZone = 'topology.kubernetes.io/zone';
export const labelTopologyRegion = 'topology.kubernetes.io/region';
export const taintNodeUnschedulable = 'node.kubernetes.io/unschedulable';
