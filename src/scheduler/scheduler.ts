// The scheduler's loop without its I/O: informer events feed the cache and the queue; scheduleOne pops
// a pod, runs one synchronous cycle on a fresh snapshot, assumes the pod on its node and hands the
// binding to the sink (pods/binding in the glue); a pod that fits nowhere goes back to the queue with its
// rejecting plugins, and the sink gets Kubernetes' message and the structured diagnosis (the
// PodScheduled=False condition, the FailedScheduling event). Keeping I/O behind the sink keeps this
// testable without a server.

import type { Node, Pod } from './api-types.js';
import { podKey } from './api-types.js';
import { nodeUpdateActions, podUpdateActions } from './cluster-event.js';
import { buildDiagnosis, feasibility } from './diagnosis.js';
import type { SchedulingDiagnosis } from './diagnosis.js';
import { noNodesAvailableMsg } from './fit-error.js';
import { PodInfo } from './pod-info.js';
import type { Profile } from './profile.js';
import { SchedulerCache } from './scheduler-cache.js';
import { isFailure, NoNodesAvailableError, ScheduleAlgorithm } from './schedule-pod.js';
import { SchedulingQueue } from './scheduling-queue.js';
import type { Snapshot } from './snapshot.js';

export interface SchedulerSink {
  /** POST pods/binding; rejects when the binding did not land. */
  bind(pod: Pod, nodeName: string): Promise<void>;
  /** PodScheduled=False reason Unschedulable with the message, and the FailedScheduling event. */
  unschedulable(pod: Pod, message: string, diagnosis: SchedulingDiagnosis | undefined): Promise<void>;
  /** Preemption chose a node: set status.nominatedNodeName and delete the victims. */
  preempt?(pod: Pod, nominatedNodeName: string, victims: readonly Pod[]): Promise<void>;
}

export interface SchedulerOptions {
  readonly profile: Profile;
  readonly sink: SchedulerSink;
  readonly now: () => number;
  readonly randInt: (n: number) => number;
  readonly assumedPodTtlMs?: number;
  /** Called when a sink call fails in a way the loop cannot act on (logged by the glue). */
  readonly onError?: (err: unknown, pod: string) => void;
}

export class Scheduler {
  readonly cache: SchedulerCache;
  readonly queue: SchedulingQueue;
  readonly algorithm: ScheduleAlgorithm;
  /** The latest diagnosis of each pod that is pending as unschedulable, for `why`. */
  readonly diagnoses = new Map<string, SchedulingDiagnosis>();
  /** Controller uid → its pods pending as unschedulable (the feasibility count's `pending`). */
  private readonly pendingByOwner = new Map<string, Set<string>>();
  private readonly ownerOf = new Map<string, string>();
  private snapshot: Snapshot | undefined;
  private readonly pendingBinds = new Set<Promise<void>>();
  /** Pods whose binding is under way; a delete meanwhile takes the pod out, so a failed bind is not retried. */
  private readonly binding = new Set<string>();

  constructor(private readonly opts: SchedulerOptions) {
    this.cache = new SchedulerCache({ now: opts.now, ...(opts.assumedPodTtlMs !== undefined ? { assumedPodTtlMs: opts.assumedPodTtlMs } : {}) });
    this.queue = new SchedulingQueue({ now: opts.now, eventsOf: (name) => opts.profile.plugin(name)?.events?.() ?? [] });
    this.algorithm = new ScheduleAlgorithm(opts.profile, opts.randInt);
  }

  /** Whether this scheduler should place the pod: unbound, ours, not terminating, not gated. */
  responsibleFor(pod: Pod): boolean {
    return (
      (pod.spec.nodeName ?? '') === '' &&
      (pod.spec.schedulerName ?? 'default-scheduler') === this.opts.profile.schedulerName &&
      (pod.metadata.deletionTimestamp ?? null) === null &&
      (pod.spec.schedulingGates ?? []).length === 0 &&
      pod.status?.phase !== 'Succeeded' &&
      pod.status?.phase !== 'Failed'
    );
  }

  onNodeAdd(node: Node): void {
    this.cache.addNode(node);
    this.queue.onEvent({ resource: 'Node', action: 'Add', newObj: node });
  }

  onNodeUpdate(oldNode: Node, node: Node): void {
    this.cache.updateNode(node);
    for (const action of nodeUpdateActions(oldNode, node)) this.queue.onEvent({ resource: 'Node', action, oldObj: oldNode, newObj: node });
  }

  onNodeDelete(node: Node): void {
    this.cache.removeNode(node.metadata.name);
    this.queue.onEvent({ resource: 'Node', action: 'Delete', oldObj: node });
  }

  onPodAdd(pod: Pod): void {
    if ((pod.spec.nodeName ?? '') !== '') {
      this.cache.addPod(pod);
      this.forgetDiagnosis(podKey(pod));
      this.queue.onEvent({ resource: 'Pod', action: 'Add', newObj: pod });
    } else if (this.responsibleFor(pod)) {
      this.queue.add(new PodInfo(pod));
    }
  }

  onPodUpdate(oldPod: Pod, pod: Pod): void {
    const key = podKey(pod);
    if ((pod.spec.nodeName ?? '') !== '') {
      this.queue.delete(key);
      this.cache.updatePod(pod);
      this.forgetDiagnosis(key);
      const actions = (oldPod.spec.nodeName ?? '') === '' ? (['Add'] as const) : podUpdateActions(oldPod, pod);
      for (const action of actions) this.queue.onEvent({ resource: 'Pod', action, oldObj: oldPod, newObj: pod });
    } else if (this.responsibleFor(pod)) {
      this.queue.update(new PodInfo(pod));
    } else {
      this.queue.delete(key);
    }
  }

  onPodDelete(pod: Pod): void {
    const key = podKey(pod);
    this.queue.delete(key);
    this.forgetDiagnosis(key);
    this.binding.delete(key);
    if ((pod.spec.nodeName ?? '') !== '' || this.cache.isAssumed(key)) {
      this.cache.removePod(key);
      this.queue.onEvent({ resource: 'Pod', action: 'Delete', oldObj: pod });
    }
  }

  /** One cycle; false when nothing was waiting. The binding continues in the background. */
  scheduleOne(): boolean {
    const q = this.queue.pop();
    if (q === undefined) return false;
    const pi = q.podInfo;
    this.snapshot = this.cache.updateSnapshot(this.snapshot);
    let r;
    try {
      r = this.algorithm.schedule(pi, this.snapshot);
    } catch (e) {
      if (!(e instanceof NoNodesAvailableError)) throw e;
      this.queue.addUnschedulable(q, new Set(['NodeName']));
      this.report(pi.pod, noNodesAvailableMsg, undefined);
      return true;
    }
    if (isFailure(r)) {
      this.queue.addUnschedulable(q, r.error.diagnosis.unschedulablePlugins);
      const p = r.preemption;
      const built = buildDiagnosis(r.error, { ...(p?.nominatedNodeName !== undefined ? { nominatedNodeName: p.nominatedNodeName } : {}), ...(p?.victims !== undefined ? { victims: p.victims } : {}) });
      const pending = this.pendingSiblings(pi);
      const d = pending !== undefined ? { ...built, feasibility: feasibility(this.opts.profile, pi, this.snapshot, pending) } : built;
      this.diagnoses.set(pi.key, d);
      this.report(pi.pod, d.message, d);
      if (p?.nominatedNodeName !== undefined && this.opts.sink.preempt !== undefined) {
        this.track(this.opts.sink.preempt(pi.pod, p.nominatedNodeName, (p.victims ?? []).map((v) => v.pod)), pi.key);
      }
      return true;
    }
    const assumed = pi.withNodeName(r.nodeName);
    this.cache.assumePod(assumed);
    const st = this.opts.profile.runReserve(r.state, assumed, r.nodeName);
    if (st !== null) {
      this.cache.forgetPod(pi.key);
      this.queue.addUnschedulable(q, new Set());
      return true;
    }
    this.queue.done(pi.key);
    this.binding.add(pi.key);
    const bind = this.opts.sink.bind(pi.pod, r.nodeName).then(
      () => {
        this.binding.delete(pi.key);
        this.cache.finishBinding(pi.key);
        this.forgetDiagnosis(pi.key);
      },
      (err: unknown) => {
        this.opts.profile.runUnreserve(r.state, assumed, r.nodeName);
        // No longer assumed yet not deleted: the informer has seen the pod bound, so the binding landed
        // though its answer was an error (a store timeout after the commit). As Kubernetes'
        // handleSchedulingFailure, it is not queued again: assuming it again would find it in the cache.
        const landed = !this.cache.isAssumed(pi.key);
        if (!landed) this.cache.forgetPod(pi.key);
        // Back off and retry, unless the pod was deleted meanwhile or is bound.
        if (this.binding.delete(pi.key) && !landed) this.queue.addUnschedulable(q, new Set());
        this.opts.onError?.(err, pi.key);
      },
    );
    this.track(bind, pi.key);
    return true;
  }

  /** How many pods of the pod's controller are pending as unschedulable, this one included (undefined: no controller). */
  private pendingSiblings(pi: PodInfo): number | undefined {
    const owner = (pi.pod.metadata.ownerReferences ?? []).find((r) => r.controller === true)?.uid;
    if (owner === undefined) return undefined;
    let set = this.pendingByOwner.get(owner);
    if (!set) {
      set = new Set();
      this.pendingByOwner.set(owner, set);
    }
    set.add(pi.key);
    this.ownerOf.set(pi.key, owner);
    return set.size;
  }

  private forgetDiagnosis(key: string): void {
    this.diagnoses.delete(key);
    const owner = this.ownerOf.get(key);
    if (owner === undefined) return;
    this.ownerOf.delete(key);
    const set = this.pendingByOwner.get(owner);
    set?.delete(key);
    if (set?.size === 0) this.pendingByOwner.delete(owner);
  }

  private report(pod: Pod, message: string, d: SchedulingDiagnosis | undefined): void {
    this.track(this.opts.sink.unschedulable(pod, message, d), podKey(pod));
  }

  private track(p: Promise<void>, key: string): void {
    const t = p.catch((err: unknown) => this.opts.onError?.(err, key)).finally(() => this.pendingBinds.delete(t));
    this.pendingBinds.add(t);
  }

  /** Resolves when every binding and status write started so far has settled. */
  async idle(): Promise<void> {
    while (this.pendingBinds.size > 0) await Promise.all([...this.pendingBinds]);
  }
}
