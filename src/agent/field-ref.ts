// The downward API: a pod's own fields and its containers' resources as strings, for env fieldRef /
// resourceFieldRef and for downwardAPI volume files, with the field paths Kubernetes accepts.
import { Quantity } from '../api/quantity.js';
import type { NodeFacts } from './pod-inputs.js';
import { ContainerConfigError } from './pod-inputs.js';
import type { ObjectFieldSelector, Pod, ResourceFieldSelector } from './pod-types.js';

function formatMap(m: Record<string, string> | undefined): string {
  // kubelet writes one key="value" per line, sorted, with the value Go-quoted.
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m?.[k] ?? '')}`)
    .join('\n');
}

export function podFieldValue(pod: Pod, ref: ObjectFieldSelector, podIP: string, node: NodeFacts): string {
  const path = ref.fieldPath;
  const sub = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (sub) {
    const map = sub[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations;
    return map?.[sub[2] ?? ''] ?? '';
  }
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? 'default';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'metadata.labels':
      return formatMap(pod.metadata.labels);
    case 'metadata.annotations':
      return formatMap(pod.metadata.annotations);
    case 'spec.nodeName':
      return pod.spec.nodeName ?? node.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? 'default';
    case 'status.hostIP':
    case 'status.hostIPs':
      return node.hostIP;
    case 'status.podIP':
    case 'status.podIPs':
      return podIP;
    default:
      throw new ContainerConfigError('CreateContainerConfigError', `unsupported fieldPath: ${path}`);
  }
}

export function resourceFieldValue(pod: Pod, ref: ResourceFieldSelector, containerName: string, node: NodeFacts): string {
  const name = ref.containerName ?? containerName;
  const c = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((x) => x.name === name);
  if (!c) throw new ContainerConfigError('CreateContainerConfigError', `container ${name} not found`);
  const [kind, res] = ref.resource.split('.', 2) as [string, string | undefined];
  if ((kind !== 'limits' && kind !== 'requests') || (res !== 'cpu' && res !== 'memory' && res !== 'ephemeral-storage')) {
    throw new ContainerConfigError('CreateContainerConfigError', `unsupported container resource: ${ref.resource}`);
  }
  // Without a limit kubelet reports the node's allocatable; without a request, zero (cpu and memory).
  const given = c.resources?.[kind]?.[res] ?? (kind === 'limits' ? node.allocatable[res] : undefined) ?? '0';
  const q = Quantity.parse(given);
  const divisor = Quantity.parse(ref.divisor ?? '1');
  if (divisor.isZero()) throw new ContainerConfigError('CreateContainerConfigError', 'divisor must not be zero');
  // ceil(q / divisor), in nano units so millicores divide exactly.
  const n = q.scaledValue(-9);
  const d = divisor.scaledValue(-9);
  return ((n + d - 1n) / d).toString();
}
