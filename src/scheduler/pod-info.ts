// framework.PodInfo: a pod with what every cycle would otherwise recompute (its key, requests, host
// ports, priority) worked out once, when the pod enters the queue or the cache.

import type { ContainerPort, Pod } from './api-types.js';
import { podKey, podPriority } from './api-types.js';
import { computePodRequests } from './resource.js';
import type { PodRequests } from './resource.js';

export interface HostPort {
  readonly hostIP: string;
  readonly protocol: string;
  readonly hostPort: number;
}

export class PodInfo {
  readonly pod: Pod;
  readonly key: string;
  readonly namespace: string;
  readonly priority: number;
  readonly requests: PodRequests;
  /** The container ports that take a host port (hostPort > 0), defaulted as the kubelet binds them. */
  readonly hostPorts: readonly HostPort[];

  constructor(pod: Pod) {
    this.pod = pod;
    this.key = podKey(pod);
    this.namespace = pod.metadata.namespace ?? 'default';
    this.priority = podPriority(pod);
    this.requests = computePodRequests(pod);
    this.hostPorts = hostPortsOf(pod);
  }

  get labels(): Readonly<Record<string, string>> {
    return this.pod.metadata.labels ?? {};
  }

  get terminating(): boolean {
    return this.pod.metadata.deletionTimestamp !== undefined && this.pod.metadata.deletionTimestamp !== null;
  }

  /** The same pod on a node: what the cache assumes once the cycle picked one. */
  withNodeName(nodeName: string): PodInfo {
    return new PodInfo({ ...this.pod, spec: { ...this.pod.spec, nodeName } });
  }
}

function hostPortsOf(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  const add = (ports: readonly ContainerPort[] | null | undefined): void => {
    for (const p of ports ?? []) {
      if (p.hostPort === undefined || p.hostPort <= 0) continue;
      out.push({ hostIP: p.hostIP === undefined || p.hostIP === '' ? '0.0.0.0' : p.hostIP, protocol: p.protocol ?? 'TCP', hostPort: p.hostPort });
    }
  };
  for (const c of pod.spec.containers) add(c.ports);
  // Sidecars (restartable init containers) hold their ports for the pod's life, like main containers.
  for (const c of pod.spec.initContainers ?? []) if (c.restartPolicy === 'Always') add(c.ports);
  return out;
}
