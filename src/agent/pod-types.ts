// The slice of core/v1 that the node agent reads and writes, as TypeScript shapes. The schema model in
// src/api/schema is the authority on the wire format (defaults, validation); these interfaces only type
// what the runtime touches, with Kubernetes' field names so objects from the API server fit unchanged.

export type { ObjectMeta } from '../api/object-meta.js';
import type { ObjectMeta } from '../api/object-meta.js';

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface ObjectFieldSelector {
  fieldPath: string;
  apiVersion?: string;
}

export interface ResourceFieldSelector {
  resource: string;
  containerName?: string;
  divisor?: string;
}

export interface DownwardAPIVolumeFile {
  path: string;
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: ResourceFieldSelector;
  mode?: number;
}

export interface Volume {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: string };
  configMap?: { name?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  secret?: { secretName?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  downwardAPI?: { items?: DownwardAPIVolumeFile[]; defaultMode?: number };
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
}

export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: ObjectFieldSelector;
    resourceFieldRef?: ResourceFieldSelector;
    configMapKeyRef?: KeySelector;
    secretKeyRef?: KeySelector;
  };
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}

export interface ExecAction {
  command?: string[];
}

export interface HTTPGetAction {
  path?: string;
  port: number | string;
  host?: string;
  scheme?: string;
  httpHeaders?: { name: string; value: string }[];
}

export interface TCPSocketAction {
  port: number | string;
  host?: string;
}

export interface Probe {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface LifecycleHandler {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  sleep?: { seconds: number };
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
  hostPort?: number;
}

export interface ResourceRequirements {
  limits?: Record<string, string>;
  requests?: Record<string, string>;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: ContainerPort[];
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  resources?: ResourceRequirements;
  volumeMounts?: VolumeMount[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { postStart?: LifecycleHandler; preStop?: LifecycleHandler };
  /** On an init container, Always makes it a sidecar; not supported by this agent (it runs to completion). */
  restartPolicy?: string;
}

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  restartPolicy?: RestartPolicy;
  volumes?: Volume[];
  terminationGracePeriodSeconds?: number;
  nodeName?: string;
  serviceAccountName?: string;
  hostname?: string;
  subdomain?: string;
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}

export interface ContainerStateRunning {
  startedAt?: string;
}

export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}

export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodStatus {
  phase?: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  qosClass?: string;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

/** `namespace/name`, the way kubelet names a pod in its messages. */
export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name ?? ''}`;
}

/** kubelet's `name_namespace(uid)` form, used in back-off messages. */
export function podFullName(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? 'default'}(${pod.metadata.uid ?? ''})`;
}
