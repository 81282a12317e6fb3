// The worker half of a level-based controller, shared by the lifecycle controllers: workers take keys
// from a work queue, reconcile each against the caches, and requeue with backoff on error or after the
// delay the reconcile asks for. A key is never handled by two workers at once (the queue guarantees it).
import type { Logger } from 'pino';
import type { SharedInformerFactory } from '../client/informer-factory.js';
import { WorkQueue } from '../client/work-queue.js';
import type { Clock } from '../client/clock.js';
import type { Controller, ControllerContext } from './controller.js';

export interface ReconcileResult {
  /** Look at the key again after this many ms (a timed decision: a grace period, a toleration). */
  readonly requeueAfterMs?: number;
}

export type Reconcile<K> = (key: K) => Promise<ReconcileResult | void>;

/** The keyed loop of one controller: handlers call `enqueue`, `run` drives the workers. */
export class KeyedLoop<K> {
  readonly queue: WorkQueue<K>;

  constructor(
    private readonly name: string,
    private readonly reconcile: Reconcile<K>,
    private readonly log: Logger,
    clock: Clock,
  ) {
    this.queue = new WorkQueue<K>({ clock });
  }

  enqueue(key: K): void {
    this.queue.add(key);
  }

  enqueueAfter(key: K, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  /** Waits for the informers' caches, runs `workers` workers until the signal aborts, then drains. */
  async run(informers: SharedInformerFactory, signal: AbortSignal, workers: number): Promise<void> {
    const stop = (): void => this.queue.shutDown();
    signal.addEventListener('abort', stop, { once: true });
    try {
      if (!(await informers.waitForCacheSync(signal))) return;
      await Promise.all(Array.from({ length: Math.max(1, workers) }, () => this.worker()));
    } finally {
      signal.removeEventListener('abort', stop);
      await this.queue.shutDownWithDrain();
    }
  }

  /** Handles one key (exposed for tests that step a loop by hand). */
  async handle(key: K): Promise<void> {
    try {
      const r = await this.reconcile(key);
      this.queue.forget(key);
      if (r?.requeueAfterMs !== undefined) this.queue.addAfter(key, r.requeueAfterMs);
    } catch (e) {
      this.log.warn({ err: e, controller: this.name, key, retries: this.queue.numRequeues(key) }, 'reconcile failed; retrying with backoff');
      this.queue.addRateLimited(key);
    }
  }

  private async worker(): Promise<void> {
    for (;;) {
      const next = await this.queue.get();
      if (next.shutdown) return;
      try {
        await this.handle(next.item);
      } finally {
        this.queue.done(next.item);
      }
    }
  }
}

/** A controller made of one keyed loop: it names itself, logs as itself, and runs its loop's workers. */
export abstract class LoopController<K> implements Controller {
  protected readonly log: Logger;
  protected readonly loop: KeyedLoop<K>;

  constructor(
    protected readonly ctx: ControllerContext,
    readonly name: string,
  ) {
    this.log = ctx.log.child({ controller: name });
    this.loop = new KeyedLoop<K>(name, (k) => this.reconcile(k), this.log, ctx.clock);
  }

  protected abstract reconcile(key: K): Promise<ReconcileResult | void>;

  run(signal: AbortSignal, workers: number): Promise<void> {
    return this.loop.run(this.ctx.informers, signal, workers);
  }
}
