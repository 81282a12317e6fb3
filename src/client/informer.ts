// client-go's shared informer: list, then watch from the list's resourceVersion (with bookmarks), keep an
// indexed cache of the objects, and tell handlers what changed. A 410 (the watch fell behind the store's
// compaction, or the server's window) relists; a watch stream that ends rewatches from the last
// resourceVersion seen; other failures back off and relist. Handlers run in order on the informer's own
// turn and must only enqueue keys (a slow handler slows the cache, as in client-go).
import type { Logger } from 'pino';
import { isGone, ApiStatusError } from './api-status-error.js';
import { realClock, sleepOn, type Clock, type Timer } from './clock.js';
import { Indexer, type IndexFunc, type Lister } from './indexer.js';
import { objectKey, type KubeObject } from './kube-object.js';
import type { ResourceClient } from './resource-client.js';
import type { WatchEvent } from './watch-decoder.js';

/** A deleted object whose last state the informer did not see (it was gone at a relist). */
export interface DeletedFinalStateUnknown<T> {
  readonly key: string;
  readonly obj: T;
  readonly finalStateUnknown: true;
}

export function isDeletedFinalStateUnknown<T>(o: T | DeletedFinalStateUnknown<T>): o is DeletedFinalStateUnknown<T> {
  return typeof o === 'object' && o !== null && (o as { finalStateUnknown?: unknown }).finalStateUnknown === true;
}

/** The object itself, whether deleted with its final state known or not. */
export function deletedObject<T>(o: T | DeletedFinalStateUnknown<T>): T {
  return isDeletedFinalStateUnknown(o) ? o.obj : o;
}

export interface ResourceEventHandler<T> {
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** Also called with old === new on a resync. */
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void;
}

export interface InformerOptions<T extends KubeObject> {
  /** '' (default) watches all namespaces. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly indexers?: Readonly<Record<string, IndexFunc<T>>>;
  /** Every this many ms handlers get onUpdate(obj, obj) for every object; 0 (default) never. */
  readonly resyncMs?: number;
  /** Page size of the list; default 500 as client-go's reflector. */
  readonly pageSize?: number;
  /** Each watch asks the server to end it after between this and twice this many seconds; default 300 (client-go's). */
  readonly minWatchTimeoutSeconds?: number;
  readonly clock?: Clock;
  readonly log?: Logger;
}

export interface SharedInformer<T extends KubeObject> {
  readonly lister: Lister<T>;
  addEventHandler(h: ResourceEventHandler<T>): void;
  addIndexers(indexers: Readonly<Record<string, IndexFunc<T>>>): void;
  hasSynced(): boolean;
  /** Resolves true once the first list is in the cache, false if the signal aborts first. */
  waitForSync(signal?: AbortSignal): Promise<boolean>;
  lastSyncResourceVersion(): string;
  /** Runs until the signal aborts. */
  run(signal: AbortSignal): Promise<void>;
}

const BACKOFF_START_MS = 800;
const BACKOFF_MAX_MS = 30_000;

export class Informer<T extends KubeObject> implements SharedInformer<T> {
  private readonly store: Indexer<T>;
  private readonly handlers: ResourceEventHandler<T>[] = [];
  private readonly clock: Clock;
  private synced = false;
  private syncWaiters: Array<(ok: boolean) => void> = [];
  private rv = '';
  private resyncTimer: Timer | undefined;

  constructor(
    private readonly client: ResourceClient<T>,
    private readonly opts: InformerOptions<T> = {},
  ) {
    this.store = new Indexer<T>(opts.indexers);
    this.clock = opts.clock ?? realClock;
  }

  get lister(): Lister<T> {
    return this.store;
  }

  addEventHandler(h: ResourceEventHandler<T>): void {
    this.handlers.push(h);
    // As client-go: a handler added late first hears of everything already in the cache.
    if (this.synced) for (const o of this.store.list()) this.call(() => h.onAdd?.(o, true));
  }

  addIndexers(indexers: Readonly<Record<string, IndexFunc<T>>>): void {
    this.store.addIndexers(indexers);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => resolve(false);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push((ok) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(ok);
      });
    });
  }

  lastSyncResourceVersion(): string {
    return this.rv;
  }

  async run(signal: AbortSignal): Promise<void> {
    this.scheduleResync(signal);
    let backoff = BACKOFF_START_MS;
    try {
      while (!signal.aborted) {
        try {
          await this.listAndReplace();
          backoff = BACKOFF_START_MS;
          await this.watchUntilGone(signal);
        } catch (e) {
          if (signal.aborted) break;
          this.opts.log?.warn({ err: e, resource: this.client.type.resource }, 'informer: list or watch failed; retrying');
          await sleepOn(this.clock, backoff, signal);
          backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
        }
      }
    } finally {
      this.resyncTimer?.cancel();
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      if (!this.synced) for (const w of waiters) w(false);
    }
  }

  private async listAndReplace(): Promise<void> {
    const list = await this.client.listAll(this.opts.namespace ?? '', {
      limit: this.opts.pageSize ?? 500,
      ...(this.opts.labelSelector !== undefined ? { labelSelector: this.opts.labelSelector } : {}),
      ...(this.opts.fieldSelector !== undefined ? { fieldSelector: this.opts.fieldSelector } : {}),
    });
    const initial = !this.synced;
    const seen = new Set<string>();
    for (const item of list.items) {
      const key = objectKey(item);
      seen.add(key);
      const old = this.store.upsert(item);
      if (old === undefined) this.emit((h) => h.onAdd?.(item, initial));
      else if (old.metadata?.resourceVersion !== item.metadata?.resourceVersion) this.emit((h) => h.onUpdate?.(old, item));
    }
    for (const key of this.store.keys()) {
      if (seen.has(key)) continue;
      const gone = this.store.removeKey(key)!;
      this.emit((h) => h.onDelete?.({ key, obj: gone, finalStateUnknown: true }));
    }
    this.rv = list.metadata.resourceVersion ?? '';
    if (initial) {
      this.synced = true;
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      for (const w of waiters) w(true);
    }
  }

  /** Watches (and rewatches when a stream ends) until a 410 asks for a relist; throws on other failures. */
  private async watchUntilGone(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      // As client-go: a server-side timeout between 5 and 10 minutes, so watches are spread over API servers.
      const min = this.opts.minWatchTimeoutSeconds ?? 300;
      const timeoutSeconds = min + Math.floor(Math.random() * min);
      const stream = this.client.watch(this.opts.namespace ?? '', {
        resourceVersion: this.rv,
        allowWatchBookmarks: true,
        timeoutSeconds,
        signal,
        ...(this.opts.labelSelector !== undefined ? { labelSelector: this.opts.labelSelector } : {}),
        ...(this.opts.fieldSelector !== undefined ? { fieldSelector: this.opts.fieldSelector } : {}),
      });
      try {
        for await (const ev of stream) {
          if (!this.apply(ev)) return;
        }
      } catch (e) {
        if (isGone(e)) return;
        throw e;
      }
    }
  }

  /** Applies one watch event to the cache; false when it asks for a relist. */
  private apply(ev: WatchEvent<T>): boolean {
    if (ev.type === 'ERROR') {
      const status = ev.object as unknown as { code?: number; reason?: string; message?: string };
      if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone') return false;
      throw new ApiStatusError({ apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', code: status.code ?? 500, reason: status.reason ?? 'InternalError', message: status.message ?? 'watch error' });
    }
    const rv = ev.object.metadata?.resourceVersion;
    if (rv) this.rv = rv;
    if (ev.type === 'BOOKMARK') return true;
    const obj = ev.object;
    if (ev.type === 'DELETED') {
      const old = this.store.removeKey(objectKey(obj));
      if (old !== undefined) this.emit((h) => h.onDelete?.(obj));
      return true;
    }
    const old = this.store.upsert(obj);
    if (old === undefined) this.emit((h) => h.onAdd?.(obj, false));
    else this.emit((h) => h.onUpdate?.(old, obj));
    return true;
  }

  private scheduleResync(signal: AbortSignal): void {
    const every = this.opts.resyncMs ?? 0;
    if (every <= 0 || signal.aborted) return;
    this.resyncTimer = this.clock.setTimer(() => {
      if (this.synced) for (const o of this.store.list()) this.emit((h) => h.onUpdate?.(o, o));
      this.scheduleResync(signal);
    }, every);
  }

  private emit(fn: (h: ResourceEventHandler<T>) => void): void {
    for (const h of this.handlers) this.call(() => fn(h));
  }

  private call(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.opts.log?.error({ err: e, resource: this.client.type.resource }, 'informer: an event handler threw');
    }
  }
}
