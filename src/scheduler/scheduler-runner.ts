// The scheduler on a live API server (kube-scheduler's eventhandlers.go and its Run): shared informers
// for pods (not terminated), nodes and PriorityClasses feed the Scheduler — unassigned pods that name
// this scheduler into the queue, assigned ones into the cache, node and pod changes moving unschedulable
// pods back — and, while this process leads, one loop pops and schedules pod after pod, yielding to I/O
// between cycles, flushing the queue's backoff on a timer and holding back when too many binds are in
// flight. The caches fill and follow changes while standing by, so a new leader starts warm.
import type { Logger } from 'pino';
import { realClock, sleepOn, type Clock, type Timer } from '../client/clock.js';
import { ApiEventRecorder } from '../client/event-recorder.js';
import { SharedInformerFactory } from '../client/informer-factory.js';
import { deletedObject, type SharedInformer } from '../client/informer.js';
import type { KubeObject } from '../client/kube-object.js';
import { NODES, PODS, PRIORITYCLASSES } from '../client/resource-types.js';
import type { RestClient } from '../client/rest-client.js';
import { ApiSchedulerSink } from './api-sink.js';
import type { Node, Pod } from './api-types.js';
import { defaultProfile } from './profile.js';
import { Scheduler } from './scheduler.js';

/** Binds in flight past which the loop waits for answers (the API server's own limit is 200 mutating). */
const MAX_INFLIGHT_BINDS = 100;
/** When nothing wakes the loop, it looks at the queue's timers at least this often. */
const IDLE_WAKE_MS = 1_000;

export interface SchedulerRunnerOptions {
  /** For informers (reads). */
  readonly rest: RestClient;
  /** For writes: carries the fencing token when leader-elected. */
  readonly writeRest: RestClient;
  readonly log: Logger;
  readonly clock?: Clock;
  readonly schedulerName?: string;
  readonly randInt?: (n: number) => number;
}

interface PriorityClass extends KubeObject {
  value?: number;
  globalDefault?: boolean;
  preemptionPolicy?: string;
}

export class SchedulerRunner {
  readonly scheduler: Scheduler;
  readonly sink: ApiSchedulerSink;
  readonly recorder: ApiEventRecorder;
  private readonly factory: SharedInformerFactory;
  private readonly priorityClasses: SharedInformer<PriorityClass>;
  private readonly clock: Clock;
  private wakeUp: (() => void) | undefined;

  constructor(private readonly o: SchedulerRunnerOptions) {
    this.clock = o.clock ?? realClock;
    this.factory = new SharedInformerFactory(o.rest, { clock: this.clock, log: o.log });
    this.recorder = new ApiEventRecorder(o.writeRest, { component: o.schedulerName ?? 'default-scheduler' }, { clock: this.clock, log: o.log });
    this.sink = new ApiSchedulerSink({ rest: o.writeRest, recorder: this.recorder, clock: this.clock, log: o.log, ...(o.schedulerName !== undefined ? { schedulerName: o.schedulerName } : {}) });
    this.scheduler = new Scheduler({
      profile: defaultProfile(o.schedulerName !== undefined ? { schedulerName: o.schedulerName } : {}),
      sink: this.sink,
      now: () => this.clock.now(),
      randInt: o.randInt ?? ((n) => Math.floor(Math.random() * n)),
      onError: (err, pod) => o.log.warn({ err, pod }, 'scheduling: a write failed'),
    });
    this.priorityClasses = this.factory.informerFor<PriorityClass>(PRIORITYCLASSES);
    const nodes = this.factory.informerFor<KubeObject>(NODES);
    // As kube-scheduler: terminated pods hold no resources and need no placement.
    const pods = this.factory.informerFor<KubeObject>(PODS, { fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed' });
    const s = this.scheduler;
    nodes.addEventHandler({
      onAdd: (n) => this.handled(() => s.onNodeAdd(n as unknown as Node)),
      onUpdate: (a, b) => this.handled(() => s.onNodeUpdate(a as unknown as Node, b as unknown as Node)),
      onDelete: (n) => this.handled(() => s.onNodeDelete(deletedObject(n) as unknown as Node)),
    });
    pods.addEventHandler({
      onAdd: (p) => this.handled(() => s.onPodAdd(this.resolved(p))),
      onUpdate: (a, b) => this.handled(() => s.onPodUpdate(this.resolved(a), this.resolved(b))),
      onDelete: (p) => this.handled(() => s.onPodDelete(this.resolved(deletedObject(p)))),
    });
  }

  /** Starts the informers and waits for their first lists; false if the signal aborted first. */
  async startInformers(signal: AbortSignal): Promise<boolean> {
    this.factory.start(signal);
    return this.factory.waitForCacheSync(signal);
  }

  /** Resolves when the informers have stopped (after their signal aborted). */
  informersStopped(): Promise<void> {
    return this.factory.stopped();
  }

  /**
   * The Priority admission plugin's work, when the API server has not done it: spec.priority (and
   * preemptionPolicy) from the pod's PriorityClass, or from the global default class.
   */
  private resolved(obj: KubeObject): Pod {
    const pod = obj as unknown as Pod;
    if (pod.spec.priority !== undefined && pod.spec.priority !== null) return pod;
    const name = pod.spec.priorityClassName ?? '';
    const pc = name !== '' ? this.priorityClasses.lister.get('', name) : this.priorityClasses.lister.list().find((c) => c.globalDefault === true);
    if (pc === undefined || typeof pc.value !== 'number') return pod;
    const preemptionPolicy = pod.spec.preemptionPolicy ?? pc.preemptionPolicy;
    return { ...pod, spec: { ...pod.spec, priority: pc.value, ...(preemptionPolicy !== undefined ? { preemptionPolicy } : {}) } };
  }

  private handled(fn: () => void): void {
    fn();
    this.wake();
  }

  private wake(): void {
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
  }

  /** Sleeps until an informer event, a bind's answer, the queue's next timer or the signal. */
  private async idle(signal: AbortSignal, maxMs: number): Promise<void> {
    let timer: Timer | undefined;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done);
        timer?.cancel();
        resolve();
      };
      this.wakeUp = done;
      timer = this.clock.setTimer(done, Math.max(0, maxMs));
      signal.addEventListener('abort', done, { once: true });
    });
    if (this.wakeUp !== undefined) this.wakeUp = undefined;
  }

  /** The scheduling loop, while `signal` (leadership) holds; waits for started writes before it returns. */
  async run(signal: AbortSignal): Promise<void> {
    const s = this.scheduler;
    this.o.log.info(s.queue.stats(), 'scheduling loop started');
    while (!signal.aborted) {
      s.queue.flush();
      if (this.sink.inflight >= MAX_INFLIGHT_BINDS) {
        await sleepOn(this.clock, 5, signal);
        continue;
      }
      if (s.scheduleOne()) {
        // Let the binds' answers and the watch events in between cycles.
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      const next = s.queue.nextFlushAt();
      await this.idle(signal, next === undefined ? IDLE_WAKE_MS : Math.min(IDLE_WAKE_MS, next - this.clock.now()));
    }
    await s.idle();
    await this.recorder.flush();
    this.o.log.info(s.queue.stats(), 'scheduling loop stopped');
  }
}
