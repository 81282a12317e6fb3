// The shape every controller in the controller manager has: it asks the shared informer factory for the
// informers it needs when built, then runs its workers until the signal aborts. Writes go through
// `rest`, which carries the manager's fencing token, so a deposed manager's writes are refused.
import type { Logger } from 'pino';
import type { Clock } from '../client/clock.js';
import type { EventRecorder } from '../client/event-recorder.js';
import type { SharedInformerFactory } from '../client/informer-factory.js';
import type { RestClient } from '../client/rest-client.js';

export interface ControllerContext {
  readonly informers: SharedInformerFactory;
  /** For every write; carries the fencing token of the lease the manager holds. */
  readonly rest: RestClient;
  /** Events are written as this controller's component (`replicaset-controller`, …). */
  recorderFor(component: string): EventRecorder;
  readonly clock: Clock;
  readonly log: Logger;
}

export interface Controller {
  /** Kubernetes' name for it (`replicaset`, `deployment`, `garbage-collector`, …), as in `--controllers`. */
  readonly name: string;
  /** Runs the workers; resolves after the signal aborts and the workers have stopped. Caches are synced first. */
  run(signal: AbortSignal, workers: number): Promise<void>;
}

/** Builds a controller on a context (it asks for its informers here, before the factory starts). */
export type ControllerFactory = (ctx: ControllerContext) => Controller;
