// The controller manager: one shared informer factory and one fenced client for the controllers it runs,
// each with its own worker count (`--concurrent-<name>-syncs`). `--controllers` is Kubernetes' syntax:
// `*` for every controller on by default, `name` to add one, `-name` to leave one out, and an unknown name
// is an error naming the known ones. run() builds the controllers, starts the informers, and returns after
// the signal aborts and every worker and informer has stopped.
import type { Logger } from 'pino';
import { realClock, type Clock } from '../client/clock.js';
import { ApiEventRecorder, type EventRecorder } from '../client/event-recorder.js';
import { SharedInformerFactory } from '../client/informer-factory.js';
import type { RestClient } from '../client/rest-client.js';
import type { ControllerEntry } from './all-controllers.js';
import type { Controller, ControllerContext } from './controller.js';

export const DEFAULT_CONCURRENT_SYNCS = 5;

export class ControllerSelectionError extends Error {
  readonly code = 'CONTROLLERS_UNKNOWN';
  constructor(message: string) {
    super(message);
    this.name = 'ControllerSelectionError';
  }
}

/** The names `--controllers` selects, in the list's order (kube-controller-manager's IsControllerEnabled). */
export function selectControllers(spec: readonly string[], all: readonly ControllerEntry[]): string[] {
  const known = new Set(all.map((c) => c.name));
  for (const raw of spec) {
    const item = raw.trim();
    const name = item.startsWith('-') ? item.slice(1) : item;
    if (item === '*' || item === '') continue;
    if (!known.has(name)) throw new ControllerSelectionError(`${JSON.stringify(name)} is not in the list of known controllers: ${[...known].sort().join(', ')}`);
  }
  const items = spec.map((s) => s.trim());
  const star = items.includes('*');
  return all
    .filter((c) => {
      if (items.includes(`-${c.name}`)) return false;
      if (items.includes(c.name)) return true;
      return star && c.enabledByDefault !== false;
    })
    .map((c) => c.name);
}

export interface ControllerManagerOptions {
  /** Lists and watches (the informers) go through this. */
  readonly rest: RestClient;
  /** Writes go through this: the fenced client when the manager is leader-elected; `rest` otherwise. */
  readonly writeRest?: RestClient;
  readonly controllers: readonly ControllerEntry[];
  /** Names to run (selectControllers' result). */
  readonly enabled: readonly string[];
  /** Workers per controller name; DEFAULT_CONCURRENT_SYNCS when absent. */
  readonly concurrency?: Readonly<Record<string, number>>;
  readonly log: Logger;
  readonly clock?: Clock;
  /** Resync of every informer; 0 (default) never. */
  readonly resyncMs?: number;
  /** For events' source.host (kube-controller-manager's identity). */
  readonly identity?: string;
}

/**
 * The controllers on one informer factory. The caches can fill while the manager stands by
 * (startInformers), and the workers run only while it leads (runControllers), as kube-controller-manager.
 */
export class ControllerManager {
  private readonly informers: SharedInformerFactory;
  private readonly recorders: ApiEventRecorder[] = [];
  private readonly running: Array<{ c: Controller; workers: number }> = [];

  constructor(private readonly o: ControllerManagerOptions) {
    const clock = o.clock ?? realClock;
    const writes = o.writeRest ?? o.rest;
    this.informers = new SharedInformerFactory(o.rest, { clock, log: o.log, ...(o.resyncMs !== undefined ? { resyncMs: o.resyncMs } : {}) });
    const ctx: ControllerContext = {
      informers: this.informers,
      rest: writes,
      clock,
      log: o.log,
      recorderFor: (component: string): EventRecorder => {
        const r = new ApiEventRecorder(writes, { component, ...(o.identity !== undefined ? { host: o.identity } : {}) }, { clock, log: o.log });
        this.recorders.push(r);
        return r;
      },
    };
    for (const entry of o.controllers) {
      if (!o.enabled.includes(entry.name)) continue;
      this.running.push({ c: entry.factory(ctx), workers: o.concurrency?.[entry.name] ?? DEFAULT_CONCURRENT_SYNCS });
    }
  }

  get names(): string[] {
    return this.running.map((r) => r.c.name);
  }

  /** Starts the informers (until the signal aborts); true once every cache holds its first list. */
  async startInformers(signal: AbortSignal): Promise<boolean> {
    this.informers.start(signal);
    return this.informers.waitForCacheSync(signal);
  }

  /** Runs every controller's workers until the signal aborts, then lets their events out. */
  async runControllers(signal: AbortSignal): Promise<void> {
    this.o.log.info({ controllers: this.names }, 'starting controllers');
    await Promise.all(this.running.map((r) => r.c.run(signal, r.workers)));
    await Promise.allSettled(this.recorders.map((r) => r.flush()));
  }

  /** Resolves when the informers have stopped (after startInformers' signal aborts). */
  informersStopped(): Promise<void> {
    return this.informers.stopped();
  }
}

/** Not leader-elected: informers and controllers on one signal. */
export async function runControllerManager(o: ControllerManagerOptions, signal: AbortSignal): Promise<void> {
  const m = new ControllerManager(o);
  if (await m.startInformers(signal)) await m.runControllers(signal);
  await m.informersStopped();
}
