// One informer per resource (and selector) shared by every loop in a process, as client-go's
// SharedInformerFactory: the scheduler, the controllers and the agent ask for the informers they need,
// then start them together and wait for all caches to fill before their workers run.
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { IndexFunc } from './indexer.js';
import { Informer, type SharedInformer } from './informer.js';
import type { KubeObject } from './kube-object.js';
import { ResourceClient, type ResourceType } from './resource-client.js';
import type { RestClient } from './rest-client.js';

export interface InformerFactoryOptions {
  readonly resyncMs?: number;
  readonly clock?: Clock;
  readonly log?: Logger;
}

export interface InformerRequest<T extends KubeObject> {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly indexers?: Readonly<Record<string, IndexFunc<T>>>;
}

export class SharedInformerFactory {
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private readonly running: Promise<void>[] = [];
  private started: AbortSignal | undefined;

  constructor(
    readonly rest: RestClient,
    private readonly opts: InformerFactoryOptions = {},
  ) {}

  /** The informer of a resource (created on first ask; later asks share it and may add indexers). */
  informerFor<T extends KubeObject>(type: ResourceType, req: InformerRequest<T> = {}): SharedInformer<T> {
    const id = [type.group, type.version, type.resource, req.namespace ?? '', req.labelSelector ?? '', req.fieldSelector ?? ''].join('|');
    let inf = this.informers.get(id) as Informer<T> | undefined;
    if (inf === undefined) {
      inf = new Informer<T>(new ResourceClient<T>(this.rest, type), {
        ...req,
        ...(this.opts.resyncMs !== undefined ? { resyncMs: this.opts.resyncMs } : {}),
        ...(this.opts.clock !== undefined ? { clock: this.opts.clock } : {}),
        ...(this.opts.log !== undefined ? { log: this.opts.log.child({ informer: type.resource }) } : {}),
      });
      this.informers.set(id, inf as unknown as Informer<KubeObject>);
      if (this.started !== undefined) this.running.push(inf.run(this.started));
    } else if (req.indexers !== undefined) {
      inf.addIndexers(req.indexers);
    }
    return inf;
  }

  /** Starts every informer asked for so far (and later ones as they are asked for). */
  start(signal: AbortSignal): void {
    if (this.started !== undefined) return;
    this.started = signal;
    for (const inf of this.informers.values()) this.running.push(inf.run(signal));
  }

  /** True once every informer has its first list, false if the signal aborts first. */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
    return results.every(Boolean);
  }

  /** Resolves when every started informer has stopped (after the start signal aborts). */
  async stopped(): Promise<void> {
    await Promise.allSettled(this.running);
  }
}
