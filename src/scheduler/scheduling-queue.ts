// The scheduling queue: activeQ (higher priority first, then the earlier arrival — PrioritySort),
// backoffQ (pods waiting out a backoff of 1 s doubling per attempt up to 10 s, Kubernetes' defaults) and
// the unschedulable pods, which go back only on a cluster event one of their rejecting plugins
// registered (and whose hint says it may help), or after 5 minutes regardless. An event that arrives
// while a pod is being scheduled sends it to backoff rather than to the unschedulable pods, so it is not
// lost. Time is injected; the glue calls flush() from a timer.

import type { ClusterEvent, ClusterEventOccurrence } from './cluster-event.js';
import { eventMatches } from './cluster-event.js';
import { KeyedHeap } from './heap.js';
import type { PodInfo } from './pod-info.js';

export interface QueuedPodInfo {
  podInfo: PodInfo;
  /** When the pod first entered the queue (PrioritySort's tie breaker). */
  readonly initialTimestamp: number;
  /** When it last entered the queue: the start of its backoff. */
  timestamp: number;
  attempts: number;
  /** The plugins that rejected it in its last attempt. */
  unschedulablePlugins: ReadonlySet<string>;
}

export interface QueueOptions {
  readonly now: () => number;
  /** The events each plugin registered (EventsToRegister), by plugin name. */
  readonly eventsOf: (plugin: string) => readonly ClusterEvent[];
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly maxInUnschedulableMs?: number;
}

export class SchedulingQueue {
  private readonly active = new KeyedHeap<QueuedPodInfo>(
    (q) => q.podInfo.key,
    (a, b) => (a.podInfo.priority !== b.podInfo.priority ? a.podInfo.priority > b.podInfo.priority : a.initialTimestamp < b.initialTimestamp),
  );
  private readonly backoff = new KeyedHeap<QueuedPodInfo>((q) => q.podInfo.key, (a, b) => this.backoffExpiry(a) < this.backoffExpiry(b));
  private readonly unschedulable = new Map<string, QueuedPodInfo>();
  /** Pods popped and not yet done, with the events seen since. */
  private readonly inFlight = new Map<string, ClusterEventOccurrence[]>();
  private readonly initialBackoff: number;
  private readonly maxBackoff: number;
  private readonly maxInUnschedulable: number;

  constructor(private readonly opts: QueueOptions) {
    this.initialBackoff = opts.initialBackoffMs ?? 1_000;
    this.maxBackoff = opts.maxBackoffMs ?? 10_000;
    this.maxInUnschedulable = opts.maxInUnschedulableMs ?? 300_000;
  }

  /** calculateBackoffDuration: initial * 2^(attempts-1), capped. */
  backoffDuration(q: QueuedPodInfo): number {
    let d = this.initialBackoff;
    for (let i = 1; i < q.attempts; i++) {
      d *= 2;
      if (d >= this.maxBackoff) return this.maxBackoff;
    }
    return Math.min(d, this.maxBackoff);
  }

  private backoffExpiry(q: QueuedPodInfo): number {
    return q.timestamp + this.backoffDuration(q);
  }

  /** A new pending pod. */
  add(pi: PodInfo): void {
    const now = this.opts.now();
    this.unschedulable.delete(pi.key);
    this.backoff.delete(pi.key);
    const old = this.active.get(pi.key);
    this.active.push(old !== undefined ? { ...old, podInfo: pi } : { podInfo: pi, initialTimestamp: now, timestamp: now, attempts: 0, unschedulablePlugins: new Set() });
  }

  /** An update to a pending pod: it is retried now if it was waiting as unschedulable (its spec may fit now). */
  update(pi: PodInfo): void {
    for (const q of [this.active.get(pi.key), this.backoff.get(pi.key)]) {
      if (q === undefined) continue;
      q.podInfo = pi;
      if (this.active.has(pi.key)) this.active.push(q);
      else this.backoff.push(q);
      return;
    }
    const u = this.unschedulable.get(pi.key);
    if (u !== undefined) {
      this.unschedulable.delete(pi.key);
      u.podInfo = pi;
      this.requeue(u);
      return;
    }
    if (!this.inFlight.has(pi.key)) this.add(pi);
  }

  delete(key: string): void {
    this.active.delete(key);
    this.backoff.delete(key);
    this.unschedulable.delete(key);
  }

  /** The next pod to schedule, or undefined when activeQ is empty. */
  pop(): QueuedPodInfo | undefined {
    const q = this.active.pop();
    if (q === undefined) return undefined;
    q.attempts++;
    this.inFlight.set(q.podInfo.key, []);
    return q;
  }

  /** The cycle of a popped pod ended (bound, or handed back). */
  done(key: string): void {
    this.inFlight.delete(key);
  }

  /**
   * AddUnschedulableIfNotPresent: a popped pod failed. With rejecting plugins, it waits for an event one
   * of them registered (unless such an event came during its cycle); without (an error), it backs off.
   */
  addUnschedulable(q: QueuedPodInfo, unschedulablePlugins: ReadonlySet<string>): void {
    const key = q.podInfo.key;
    const seen = this.inFlight.get(key) ?? [];
    this.inFlight.delete(key);
    if (this.active.has(key) || this.backoff.has(key) || this.unschedulable.has(key)) return;
    q.timestamp = this.opts.now();
    q.unschedulablePlugins = unschedulablePlugins;
    if (unschedulablePlugins.size === 0 || seen.some((ev) => this.mayHelp(q, ev))) {
      this.backoff.push(q);
      return;
    }
    this.unschedulable.set(key, q);
  }

  private mayHelp(q: QueuedPodInfo, ev: ClusterEventOccurrence): boolean {
    for (const plugin of q.unschedulablePlugins) {
      for (const reg of this.opts.eventsOf(plugin)) {
        if (!eventMatches(reg, ev)) continue;
        if (reg.hint === undefined || reg.hint(q.podInfo, ev) === 'Queue') return true;
      }
    }
    return false;
  }

  private requeue(q: QueuedPodInfo): void {
    if (this.backoffExpiry(q) > this.opts.now()) this.backoff.push(q);
    else this.active.push(q);
  }

  /** MoveAllToActiveOrBackoffQueue for one cluster event: unschedulable pods it may help go back. */
  onEvent(ev: ClusterEventOccurrence): number {
    for (const seen of this.inFlight.values()) seen.push(ev);
    let moved = 0;
    for (const [key, q] of this.unschedulable) {
      if (!this.mayHelp(q, ev)) continue;
      this.unschedulable.delete(key);
      this.requeue(q);
      moved++;
    }
    return moved;
  }

  /** flushBackoffQCompleted and flushUnschedulablePodsLeftover: what time alone lets go. */
  flush(): void {
    const now = this.opts.now();
    for (;;) {
      const top = this.backoff.peek();
      if (top === undefined || this.backoffExpiry(top) > now) break;
      this.backoff.pop();
      this.active.push(top);
    }
    for (const [key, q] of this.unschedulable) {
      if (now - q.timestamp < this.maxInUnschedulable) continue;
      this.unschedulable.delete(key);
      this.requeue(q);
    }
  }

  /** When flush() next has something to do (for the glue's timer), or undefined. */
  nextFlushAt(): number | undefined {
    let t: number | undefined;
    const top = this.backoff.peek();
    if (top !== undefined) t = this.backoffExpiry(top);
    for (const q of this.unschedulable.values()) t = Math.min(t ?? Infinity, q.timestamp + this.maxInUnschedulable);
    return t;
  }

  stats(): { active: number; backoff: number; unschedulable: number; inFlight: number } {
    return { active: this.active.size, backoff: this.backoff.size, unschedulable: this.unschedulable.size, inFlight: this.inFlight.size };
  }
}
