// The scheduler's cache: nodes and the pods on them, including assumed pods — pods a cycle placed whose
// binding the informer has not shown yet — so a burst of cycles never overcommits a node. An assumed pod
// is confirmed when the informer delivers it bound, forgotten if its binding fails, and expires a TTL
// after its binding finished if it is never observed (e.g. deleted before the watch caught up).
// Kubernetes 1.32 never expires them (durationToExpireAssumedPod = 0); the TTL here is a safety net.
// updateSnapshot re-clones only the nodes that changed since the last cycle.

import type { Node, Pod } from './api-types.js';
import { podKey } from './api-types.js';
import { NodeInfo } from './node-info.js';
import { NodeTree } from './node-tree.js';
import { PodInfo } from './pod-info.js';
import { Snapshot } from './snapshot.js';

export class CacheError extends Error {
  constructor(readonly code: 'POD_ALREADY_IN_CACHE' | 'POD_NOT_ASSUMED' | 'POD_NOT_IN_CACHE', message: string) {
    super(message);
    this.name = 'CacheError';
  }
}

interface PodState {
  info: PodInfo;
  /** When an assumed pod expires; undefined until its binding finished, and for observed pods. */
  deadline: number | undefined;
}

export interface CacheOptions {
  readonly now: () => number;
  /** How long an assumed pod whose binding finished waits to be observed before it is dropped. */
  readonly assumedPodTtlMs?: number;
}

export class SchedulerCache {
  private readonly nodes = new Map<string, NodeInfo>();
  private readonly tree = new NodeTree();
  private readonly podStates = new Map<string, PodState>();
  private readonly assumed = new Set<string>();
  private readonly dirty = new Set<string>();
  private listChanged = true;
  private readonly snapshotCopy = new Map<string, NodeInfo>();
  private readonly ttl: number;

  constructor(private readonly opts: CacheOptions) {
    this.ttl = opts.assumedPodTtlMs ?? 30_000;
  }

  private nodeInfo(name: string): NodeInfo {
    let ni = this.nodes.get(name);
    if (ni === undefined) this.nodes.set(name, (ni = new NodeInfo(name)));
    return ni;
  }

  private touched(ni: NodeInfo): void {
    ni.generation++;
    this.dirty.add(ni.name);
  }

  addNode(node: Node): void {
    const ni = this.nodeInfo(node.metadata.name);
    ni.setNode(node);
    this.tree.add(node);
    this.listChanged = true;
    this.touched(ni);
  }

  updateNode(node: Node): void {
    this.addNode(node);
  }

  removeNode(name: string): void {
    const ni = this.nodes.get(name);
    if (ni === undefined) return;
    this.tree.remove(name);
    this.listChanged = true;
    // Pods still bound there keep their accounting until they are deleted, as Kubernetes keeps a
    // node-less NodeInfo; it just leaves the snapshot.
    ni.node = undefined;
    if (ni.pods.length === 0) this.nodes.delete(name);
    this.touched(ni);
  }

  private place(pi: PodInfo): void {
    const n = pi.pod.spec.nodeName as string;
    const ni = this.nodeInfo(n);
    ni.addPod(pi);
    this.touched(ni);
  }

  private unplace(pi: PodInfo): void {
    const n = pi.pod.spec.nodeName as string;
    const ni = this.nodes.get(n);
    if (ni === undefined) return;
    ni.removePod(pi.key);
    this.touched(ni);
    if (ni.node === undefined && ni.pods.length === 0) this.nodes.delete(n);
  }

  /** AssumePod: the cycle chose pod.spec.nodeName; count it there until the informer confirms it. */
  assumePod(pi: PodInfo): void {
    if (this.podStates.has(pi.key)) throw new CacheError('POD_ALREADY_IN_CACHE', `pod ${pi.key} is in the cache, so can't be assumed`);
    this.place(pi);
    this.podStates.set(pi.key, { info: pi, deadline: undefined });
    this.assumed.add(pi.key);
  }

  /** FinishBinding: the bind call returned; the expiry clock starts. */
  finishBinding(key: string): void {
    const ps = this.podStates.get(key);
    if (ps !== undefined && this.assumed.has(key)) ps.deadline = this.opts.now() + this.ttl;
  }

  /** ForgetPod: the binding failed; the node gets its room back. */
  forgetPod(key: string): void {
    const ps = this.podStates.get(key);
    if (ps === undefined || !this.assumed.has(key)) throw new CacheError('POD_NOT_ASSUMED', `pod ${key} wasn't assumed so cannot be forgotten`);
    this.unplace(ps.info);
    this.podStates.delete(key);
    this.assumed.delete(key);
  }

  isAssumed(key: string): boolean {
    return this.assumed.has(key);
  }

  /** AddPod: the informer shows a bound pod; an assumed one is confirmed (on the node it really went to). */
  addPod(pod: Pod): void {
    const key = podKey(pod);
    const ps = this.podStates.get(key);
    const pi = new PodInfo(pod);
    if (ps !== undefined && this.assumed.has(key)) {
      this.unplace(ps.info);
      this.assumed.delete(key);
    } else if (ps !== undefined) {
      this.unplace(ps.info);
    }
    this.place(pi);
    this.podStates.set(key, { info: pi, deadline: undefined });
  }

  updatePod(pod: Pod): void {
    this.addPod(pod);
  }

  removePod(key: string): void {
    const ps = this.podStates.get(key);
    if (ps === undefined) return;
    this.unplace(ps.info);
    this.podStates.delete(key);
    this.assumed.delete(key);
  }

  /** cleanupAssumedPods: drops assumed pods whose binding finished more than the TTL ago. */
  cleanupExpiredAssumedPods(): string[] {
    const now = this.opts.now();
    const out: string[] = [];
    for (const key of this.assumed) {
      const ps = this.podStates.get(key);
      if (ps?.deadline !== undefined && ps.deadline <= now) {
        this.removePod(key);
        out.push(key);
      }
    }
    return out;
  }

  get nodeCount(): number {
    return this.tree.size;
  }

  get podCount(): number {
    return this.podStates.size;
  }

  /** The live NodeInfo, for tests and diagnoses; cycles use the snapshot. */
  node(name: string): NodeInfo | undefined {
    return this.nodes.get(name);
  }

  /** UpdateSnapshot: re-clones the nodes changed since the last call, and the order when nodes came or went. */
  updateSnapshot(prev?: Snapshot): Snapshot {
    const changed: NodeInfo[] = [];
    for (const name of this.dirty) {
      const ni = this.nodes.get(name);
      if (ni === undefined || ni.node === undefined) {
        this.snapshotCopy.delete(name);
      } else {
        const c = ni.clone();
        this.snapshotCopy.set(name, c);
        changed.push(c);
      }
    }
    this.dirty.clear();
    if (!this.listChanged && prev !== undefined) {
      // Same nodes in the same order: patch the previous snapshot where nodes changed.
      for (const c of changed) prev.replace(c);
      return prev;
    }
    this.listChanged = false;
    return new Snapshot(this.tree.list().map((n) => this.snapshotCopy.get(n)).filter((x): x is NodeInfo => x !== undefined));
  }
}
