// framework.NodeInfo: one node as the scheduler accounts for it — its allocatable, the pods on it
// (observed and assumed), what they request (actual and non-zero), and the host ports they hold.
// Mutated only by the cache; a cycle reads clones in the snapshot.

import type { Node, Taint } from './api-types.js';
import type { HostPort, PodInfo } from './pod-info.js';
import { nodeAllocatable, Resource } from './resource.js';

const wildcardIP = '0.0.0.0';

/** framework.HostPortInfo: ip → "protocol/port" → count of pods holding it. */
export class HostPortInfo {
  private readonly byIP = new Map<string, Map<string, number>>();

  add(p: HostPort): void {
    let m = this.byIP.get(p.hostIP);
    if (m === undefined) this.byIP.set(p.hostIP, (m = new Map()));
    const k = `${p.protocol}/${p.hostPort}`;
    m.set(k, (m.get(k) ?? 0) + 1);
  }

  remove(p: HostPort): void {
    const m = this.byIP.get(p.hostIP);
    const k = `${p.protocol}/${p.hostPort}`;
    const n = m?.get(k);
    if (m === undefined || n === undefined) return;
    if (n <= 1) m.delete(k);
    else m.set(k, n - 1);
    if (m.size === 0) this.byIP.delete(p.hostIP);
  }

  /** CheckConflict: 0.0.0.0 conflicts with the port on every IP, and every IP with 0.0.0.0. */
  conflicts(p: HostPort): boolean {
    if (this.byIP.size === 0) return false;
    const k = `${p.protocol}/${p.hostPort}`;
    if (p.hostIP === wildcardIP) {
      for (const m of this.byIP.values()) if (m.has(k)) return true;
      return false;
    }
    return this.byIP.get(p.hostIP)?.has(k) === true || this.byIP.get(wildcardIP)?.has(k) === true;
  }

  get size(): number {
    return this.byIP.size;
  }

  clone(): HostPortInfo {
    const c = new HostPortInfo();
    for (const [ip, m] of this.byIP) c.byIP.set(ip, new Map(m));
    return c;
  }
}

export class NodeInfo {
  /** Undefined while pods are known on a node the cache has not seen (yet, or any more). */
  node: Node | undefined;
  pods: PodInfo[] = [];
  usedPorts = new HostPortInfo();
  requested = new Resource();
  nonZeroMilliCPU = 0;
  nonZeroMemory = 0;
  allocatable = new Resource();
  /** Raised on every change; the snapshot re-clones what moved. */
  generation = 0;

  constructor(readonly name: string) {}

  get labels(): Readonly<Record<string, string>> {
    return this.node?.metadata.labels ?? {};
  }

  get taints(): readonly Taint[] {
    return this.node?.spec?.taints ?? [];
  }

  setNode(node: Node): void {
    this.node = node;
    this.allocatable = nodeAllocatable(node);
  }

  addPod(pi: PodInfo): void {
    this.pods.push(pi);
    this.account(pi, 1);
  }

  /** Removes the pod by key; false when it was not here. */
  removePod(key: string): boolean {
    const i = this.pods.findIndex((p) => p.key === key);
    if (i < 0) return false;
    const pi = this.pods[i] as PodInfo;
    // Order is irrelevant to every consumer, so the last pod fills the hole.
    this.pods[i] = this.pods[this.pods.length - 1] as PodInfo;
    this.pods.pop();
    this.account(pi, -1);
    return true;
  }

  private account(pi: PodInfo, sign: 1 | -1): void {
    this.requested.add(pi.requests.requests, sign);
    this.nonZeroMilliCPU += sign * pi.requests.nonZeroMilliCPU;
    this.nonZeroMemory += sign * pi.requests.nonZeroMemory;
    for (const p of pi.hostPorts) {
      if (sign > 0) this.usedPorts.add(p);
      else this.usedPorts.remove(p);
    }
  }

  clone(): NodeInfo {
    const c = new NodeInfo(this.name);
    c.node = this.node;
    c.pods = [...this.pods];
    c.usedPorts = this.usedPorts.clone();
    c.requested = this.requested.clone();
    c.nonZeroMilliCPU = this.nonZeroMilliCPU;
    c.nonZeroMemory = this.nonZeroMemory;
    c.allocatable = this.allocatable;
    c.generation = this.generation;
    return c;
  }
}
