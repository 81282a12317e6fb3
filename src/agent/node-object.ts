// The Node object an agent registers and the status it posts, from the host's facts (or a simulated
// node's): capacity/allocatable, well-known labels plus --node-labels, --register-with-taints, conditions
// with kubelet's reasons and heartbeat/transition times, addresses, the agent's port, node info.
import type { HostFacts, NodeCondition } from './host-facts.js';

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/** What every node an agent registers is given alike (real or simulated). */
export interface NodeSettings {
  readonly leaseDurationSeconds: number;
  readonly maxPods: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
}

export interface NodeShape {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  /** The agent's HTTPS port (daemonEndpoints.kubeletEndpoint.Port). */
  readonly port: number;
}

export interface PostedCondition extends NodeCondition {
  lastHeartbeatTime: string;
  lastTransitionTime: string;
}

function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The Node to create: metadata and spec; the status follows through nodes/status. */
export function nodeForRegistration(shape: NodeShape, facts: HostFacts): Record<string, unknown> {
  const annotations: Record<string, string> = { 'node.alpha.kubernetes.io/ttl': '0' };
  if (facts.limitsNote !== '') annotations['setpoint.dev/limits'] = facts.limitsNote;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: shape.name, labels: { ...facts.labels, ...shape.labels }, annotations },
    spec: shape.taints.length > 0 ? { taints: shape.taints.map((t) => ({ ...t })) } : {},
  };
}

/** Conditions with heartbeat now, keeping each one's transition time while its status holds. */
export function postedConditions(now: Date, facts: readonly NodeCondition[], previous: readonly PostedCondition[]): PostedCondition[] {
  const at = rfc3339(now);
  return facts.map((c) => {
    const prev = previous.find((p) => p.type === c.type);
    return { ...c, lastHeartbeatTime: at, lastTransitionTime: prev !== undefined && prev.status === c.status ? prev.lastTransitionTime : at };
  });
}

export function nodeStatus(shape: NodeShape, facts: HostFacts, conditions: readonly PostedCondition[]): Record<string, unknown> {
  return {
    capacity: facts.capacity,
    allocatable: facts.allocatable,
    conditions,
    addresses: facts.addresses,
    daemonEndpoints: { kubeletEndpoint: { Port: shape.port } },
    nodeInfo: {
      machineID: '',
      systemUUID: '',
      bootID: '',
      osImage: '',
      kubeProxyVersion: '',
      ...facts.nodeInfo,
    },
  };
}

/** `k=v,k2=v2` (--node-labels). */
export function parseNodeLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',').map((s) => s.trim())) {
    if (part === '') continue;
    const i = part.indexOf('=');
    if (i <= 0) throw new Error(`invalid --node-labels entry "${part}": expected key=value`);
    out[part.slice(0, i)] = part.slice(i + 1);
  }
  return out;
}

const EFFECTS = new Set(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);

/** `key=value:Effect,key:Effect` (--register-with-taints). */
export function parseTaints(text: string): Taint[] {
  const out: Taint[] = [];
  for (const part of text.split(',').map((s) => s.trim())) {
    if (part === '') continue;
    const colon = part.lastIndexOf(':');
    const effect = colon < 0 ? '' : part.slice(colon + 1);
    if (!EFFECTS.has(effect)) throw new Error(`invalid --register-with-taints entry "${part}": the effect must be NoSchedule, PreferNoSchedule or NoExecute`);
    const kv = part.slice(0, colon);
    const eq = kv.indexOf('=');
    const key = eq < 0 ? kv : kv.slice(0, eq);
    if (key === '') throw new Error(`invalid --register-with-taints entry "${part}": the key is empty`);
    out.push(eq < 0 ? { key, effect: effect as Taint['effect'] } : { key, value: kv.slice(eq + 1), effect: effect as Taint['effect'] });
  }
  return out;
}
