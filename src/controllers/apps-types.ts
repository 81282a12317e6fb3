// The fields of Pods, ReplicaSets and Deployments that the workload controllers read and write, typed
// once at the edge (the informers hand out KubeObjects). Only what the loops use; the API server owns
// the full schema.
import type { LabelSelector } from '../api/label-selector.js';
import type { IntOrString } from '../api/int-or-string.js';
import type { KubeObject, ObjectMeta } from '../client/kube-object.js';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastUpdateTime?: string;
  lastProbeTime?: string;
}

export interface PodTemplate {
  metadata?: ObjectMeta;
  spec?: Record<string, unknown>;
}

export interface PodCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
}

export interface Pod extends KubeObject {
  metadata: ObjectMeta;
  spec?: { nodeName?: string; [k: string]: unknown };
  status?: {
    phase?: string;
    conditions?: PodCondition[];
    containerStatuses?: Array<{ restartCount?: number; [k: string]: unknown }>;
    [k: string]: unknown;
  };
}

export interface ReplicaSetStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface ReplicaSet extends KubeObject {
  metadata: ObjectMeta;
  spec: { replicas?: number; minReadySeconds?: number; selector?: LabelSelector; template?: PodTemplate };
  status?: ReplicaSetStatus;
}

export interface RollingUpdateDeployment {
  maxSurge?: IntOrString;
  maxUnavailable?: IntOrString;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: Condition[];
  collisionCount?: number;
}

export interface Deployment extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    replicas?: number;
    selector?: LabelSelector;
    template?: PodTemplate;
    strategy?: { type?: 'RollingUpdate' | 'Recreate'; rollingUpdate?: RollingUpdateDeployment };
    minReadySeconds?: number;
    revisionHistoryLimit?: number;
    paused?: boolean;
    progressDeadlineSeconds?: number;
  };
  status?: DeploymentStatus;
}

/** spec.replicas with the API's default (1) when absent. */
export function specReplicas(o: { spec: { replicas?: number } }): number {
  return o.spec.replicas ?? 1;
}

/** The RFC 3339 seconds form Kubernetes writes in timestamps. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}
