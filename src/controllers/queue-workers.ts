// The worker side of a level-based controller: `workers` loops take keys from the queue, reconcile them,
// forget the key's backoff on success, requeue it rate-limited on failure (or after the delay the
// reconcile asked for). Shared by the workload controllers so each only writes its reconcile.
import type { Logger } from 'pino';
import type { WorkQueue } from '../client/work-queue.js';

export interface Reconciled {
  readonly requeueAfterMs?: number;
}

export interface WorkerOptions {
  /** After this many consecutive failures a key is dropped until its next event (Kubernetes' maxRetries); default never. */
  readonly maxRetries?: number;
}

export async function runQueueWorkers(
  queue: WorkQueue<string>,
  workers: number,
  reconcile: (key: string) => Promise<Reconciled>,
  log: Logger,
  opts: WorkerOptions = {},
): Promise<void> {
  const worker = async (): Promise<void> => {
    for (;;) {
      const next = await queue.get();
      if (next.shutdown) return;
      const key = next.item;
      try {
        const r = await reconcile(key);
        queue.forget(key);
        if (r.requeueAfterMs !== undefined) queue.addAfter(key, r.requeueAfterMs);
      } catch (e) {
        if (opts.maxRetries !== undefined && queue.numRequeues(key) >= opts.maxRetries) {
          log.warn({ err: e, key }, 'dropping key out of the queue after repeated failures');
          queue.forget(key);
        } else {
          log.debug({ err: e, key }, 'reconcile failed; retrying');
          queue.addRateLimited(key);
        }
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, workers) }, () => worker()));
}

/** Runs the workers until the signal aborts, then drains them. */
export async function runUntilAborted(queue: WorkQueue<string>, signal: AbortSignal, workers: Promise<void>): Promise<void> {
  if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  queue.shutDown();
  await workers;
}
