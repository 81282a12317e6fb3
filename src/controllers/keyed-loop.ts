// The keyed loop of a lifecycle controller: handlers enqueue keys, the shared queue workers
// (queue-workers.ts) reconcile them against the caches once the informers have synced, with backoff on
// error and the delay a reconcile asks for (a grace period, a toleration). A key is never handled by two
// workers at once (the queue guarantees it).
import type { Logger } from 'pino';
import type { Clock } from '../client/clock.js';
import type { SharedInformerFactory } from '../client/informer-factory.js';
import { WorkQueue } from '../client/work-queue.js';
import type { Controller, ControllerContext } from './controller.js';
import { runQueueWorkers, type Reconciled } from './queue-workers.js';

export type ReconcileResult = Reconciled;

export type Reconcile = (key: string) => Promise<ReconcileResult | void>;

export class KeyedLoop {
  readonly queue: WorkQueue<string>;

  constructor(
    private readonly reconcile: Reconcile,
    private readonly log: Logger,
    clock: Clock,
  ) {
    this.queue = new WorkQueue<string>({ clock });
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  enqueueAfter(key: string, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  /** Waits for the informers' caches, runs `workers` workers until the signal aborts, then drains. */
  async run(informers: SharedInformerFactory, signal: AbortSignal, workers: number): Promise<void> {
    const stop = (): void => this.queue.shutDown();
    signal.addEventListener('abort', stop, { once: true });
    try {
      if (!(await informers.waitForCacheSync(signal))) return;
      await runQueueWorkers(this.queue, workers, async (k) => (await this.reconcile(k)) ?? {}, this.log);
    } finally {
      signal.removeEventListener('abort', stop);
      await this.queue.shutDownWithDrain();
    }
  }
}

/** A controller made of one keyed loop: it names itself, logs as itself, and runs its loop's workers. */
export abstract class LoopController implements Controller {
  protected readonly log: Logger;
  protected readonly loop: KeyedLoop;

  constructor(
    protected readonly ctx: ControllerContext,
    readonly name: string,
  ) {
    this.log = ctx.log.child({ controller: name });
    this.loop = new KeyedLoop((k) => this.reconcile(k), this.log, ctx.clock);
  }

  protected abstract reconcile(key: string): Promise<ReconcileResult | void>;

  run(signal: AbortSignal, workers: number): Promise<void> {
    return this.loop.run(this.ctx.informers, signal, workers);
  }
}
