// The worker loop both agents run (real and simulated): take a key, reconcile it, forget it on success,
// requeue it with back-off on failure. Resolves when the queue shuts down.
import type { Logger } from 'pino';
import type { WorkQueue } from '../client/work-queue.js';

export function runWorkers(queue: WorkQueue<string>, n: number, reconcile: (key: string) => Promise<void>, log: Logger): Promise<void>[] {
  const work = async (): Promise<void> => {
    for (;;) {
      const next = await queue.get();
      if (next.shutdown) return;
      try {
        await reconcile(next.item);
        queue.forget(next.item);
      } catch (e) {
        log.warn({ err: (e as Error).message, pod: next.item }, 'pod sync failed; retrying');
        queue.addRateLimited(next.item);
      } finally {
        queue.done(next.item);
      }
    }
  };
  return Array.from({ length: n }, work);
}

/** A pod write that found the pod gone or replaced (a newer pod of the same name) has nothing left to do. */
export function isGoneOrReplaced(e: unknown): boolean {
  const code = (e as { status?: { code?: number } }).status?.code;
  return code === 404 || code === 409;
}
