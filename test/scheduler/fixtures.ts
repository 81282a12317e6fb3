// Builders for the scheduler's tests: nodes and pods as the API server would hand them over.
import type { Node, Pod, PodSpec, Taint } from '../../src/scheduler/api-types.js';
import { NodeInfo } from '../../src/scheduler/node-info.js';
import { PodInfo } from '../../src/scheduler/pod-info.js';
import { Snapshot } from '../../src/scheduler/snapshot.js';

export interface NodeOpts {
  cpu?: string;
  memory?: string;
  pods?: number;
  labels?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
}

export function node(name: string, o: NodeOpts = {}): Node {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(o.labels ?? {}) } },
    spec: { ...(o.taints !== undefined ? { taints: o.taints } : {}), ...(o.unschedulable === true ? { unschedulable: true } : {}) },
    status: { allocatable: { cpu: o.cpu ?? '4', memory: o.memory ?? '32Gi', pods: String(o.pods ?? 110) } },
  };
}

export interface PodOpts extends Partial<PodSpec> {
  cpu?: string;
  memory?: string;
  labels?: Record<string, string>;
  namespace?: string;
  hostPort?: number;
}

export function pod(name: string, o: PodOpts = {}): Pod {
  const { cpu, memory, labels, namespace, hostPort, ...spec } = o;
  const requests: Record<string, string> = {};
  if (cpu !== undefined) requests.cpu = cpu;
  if (memory !== undefined) requests.memory = memory;
  return {
    metadata: { name, namespace: namespace ?? 'default', uid: `uid-${name}`, labels: labels ?? {} },
    spec: {
      containers: [{ name: 'c', resources: { requests }, ...(hostPort !== undefined ? { ports: [{ containerPort: 80, hostPort }] } : {}) }],
      ...spec,
    },
  };
}

/** A snapshot of nodes with pods already on them ([pod, nodeName]). */
export function snapshotOf(nodes: Node[], placed: [Pod, string][] = []): Snapshot {
  const infos = nodes.map((n) => {
    const ni = new NodeInfo(n.metadata.name);
    ni.setNode(n);
    return ni;
  });
  const byName = new Map(infos.map((i) => [i.name, i]));
  for (const [p, n] of placed) byName.get(n)?.addPod(new PodInfo({ ...p, spec: { ...p.spec, nodeName: n } }));
  return new Snapshot(infos);
}

/** A deterministic tie breaker for tests: always keeps the first of equals. */
export const firstOfEquals = (): number => 1;
