// The watch cache: the Storage contract in front of the etcd one for one resource, as Kubernetes' cacher.
// One store watch fills memory; lists ("0", a resourceVersion not older than N, or consistent) and watches
// are served from it, writes and what memory cannot answer (an exact or continued list, a quorum get) go
// to the store. A consistent list first reads the store's revision through a quorum and waits for the cache
// to reach it. On a store whose answers to progress requests come in order with events, the cache asks for
// one meanwhile, so an idle resource does not wait for a write. Neither etcd 3.4.23 nor Setpoint's store is
// such a store (etcd-io/etcd#15220): there the cache, once the write's events had a moment to arrive, asks
// the store instead whether any key under the prefix was written after the cache's revision, and how many
// there are, as of the target revision: none newer and as many as the cache holds means the cache holds
// exactly the state at that revision. If the cache cannot catch up in time the list is served by the store. Thousands of watchers cost one store watch and a bounded queue each.
import { pino } from 'pino';
import type { Logger } from 'pino';
import { encodeContinue } from '../continue-token.js';
import { expiredStatus, notFound, tooLargeResourceVersion, tooOldResourceVersion } from '../errors.js';
import { StorageError } from '../interface.js';
import type { CreateOptions, DeleteOptions, GetOptions, ListOptions, ListResult, NO_CHANGE, ReadWith, Storage, StoredObject, UpdateOptions, Watch, WatchEvent, WatchOptions } from '../interface.js';
import { parseResourceVersion } from '../resource-version.js';
import { stoppingIterator } from '../watch-iterator.js';
import { CacheWatcher } from './cache-watcher.js';
import type { WindowOptions } from './event-window.js';
import { Reflector } from './reflector.js';
import { WatchCache } from './watch-cache.js';

/** What the cache stands in front of: a Storage that can ask its store for progress, or for its keys at a revision. */
export interface CacheSource extends Storage {
  requestWatchProgress(): Promise<void>;
  /** Answers to requestWatchProgress come in order with events (etcd >= 3.4.31 / 3.5.13). */
  readonly progressRequestsTrusted: boolean;
  /** As of `revision`: the number of keys under `prefix`, and whether any was written after `since`. */
  changesSince(prefix: string, since: number, revision: number): Promise<{ written: boolean; count: number }>;
}

export interface CacherOptions {
  readonly storage: CacheSource;
  /** The resource's prefix, e.g. `/registry/pods/` (ends with '/'). */
  readonly resourcePrefix: string;
  /** The key an object lives under; Kubernetes' layout by default (`<prefix><namespace>/<name>` or `<prefix><name>`). */
  readonly keyOf?: (o: StoredObject) => string;
  /** Bookmarks to watchers that asked for them, about this often (Kubernetes: every minute). */
  readonly bookmarkIntervalMs?: number;
  /** Events a watcher may have waiting before it is terminated. */
  readonly watcherQueueSize?: number;
  /** How long a read waits for the cache to reach a revision (Kubernetes' blockTimeout, 3 s). */
  readonly freshnessTimeoutMs?: number;
  readonly window?: WindowOptions;
  readonly logger?: Logger;
}

export interface CacherStats {
  readonly ready: boolean;
  readonly revision: number;
  readonly objects: number;
  readonly watchers: number;
  readonly terminatedWatchers: number;
  readonly windowEvents: number;
  readonly windowCapacity: number;
  /** Store watches the cache has started (1 while nothing broke). */
  readonly storeWatches: number;
  readonly relists: number;
  readonly consistentFallbacks: number;
  /** Reads served at a revision the cache had not reached by events, after comparing keys with the store. */
  readonly verifiedReads: number;
}

export class Cacher implements Storage {
  private readonly storage: CacheSource;
  private readonly prefix: string;
  private readonly cache: WatchCache;
  private readonly reflector: Reflector;
  private readonly log: Logger;
  private readonly keyOf: (o: StoredObject) => string;
  private readonly bookmarkIntervalMs: number;
  private readonly queueSize: number;
  private readonly freshnessMs: number;
  private readonly bookmarkTimer: NodeJS.Timeout;
  private ready = false;
  private readyWaiters: (() => void)[] = [];
  private fallbacks = 0;
  private verified = 0;
  private closed = false;

  constructor(opts: CacherOptions) {
    if (!opts.resourcePrefix.endsWith('/')) throw new Error(`cacher: resource prefix ${opts.resourcePrefix} must end with '/'`);
    this.storage = opts.storage;
    this.prefix = opts.resourcePrefix;
    this.log = (opts.logger ?? pino({ enabled: false })).child({ component: 'cacher', prefix: opts.resourcePrefix });
    this.keyOf = opts.keyOf ?? ((o) => `${this.prefix}${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name ?? ''}`);
    this.bookmarkIntervalMs = opts.bookmarkIntervalMs ?? 60_000;
    this.queueSize = opts.watcherQueueSize ?? 1000;
    this.freshnessMs = opts.freshnessTimeoutMs ?? 3000;
    this.cache = new WatchCache(opts.window);
    this.reflector = new Reflector({
      storage: this.storage,
      prefix: this.prefix,
      cache: this.cache,
      log: this.log,
      keyOf: this.keyOf,
      onReady: (r) => this.setReady(r),
    });
    this.reflector.start();
    // One timer for every watcher's bookmarks, ticking well within the shortest interval.
    this.bookmarkTimer = setInterval(() => this.dispatchBookmarks(), Math.max(10, Math.min(1000, this.bookmarkIntervalMs / 4)));
    this.bookmarkTimer.unref();
  }

  stats(): CacherStats {
    return {
      ready: this.ready,
      revision: this.cache.revision,
      objects: this.cache.size,
      watchers: this.cache.watchers.size,
      terminatedWatchers: this.cache.terminated,
      windowEvents: this.cache.window.size,
      windowCapacity: this.cache.window.capacity,
      storeWatches: this.reflector.watchesStarted,
      relists: this.reflector.relists,
      consistentFallbacks: this.fallbacks,
      verifiedReads: this.verified,
    };
  }

  /** Resolves once the cache has listed the resource. */
  whenReady(): Promise<void> {
    return this.ready ? Promise.resolve() : new Promise((r) => this.readyWaiters.push(r));
  }

  // ---- writes: straight to the store ----

  create(key: string, obj: StoredObject, opts?: CreateOptions): Promise<StoredObject> {
    return this.storage.create(key, obj, opts);
  }

  guaranteedUpdate(key: string, opts: UpdateOptions, tryUpdate: (current: StoredObject | undefined, readWith: ReadWith) => Promise<StoredObject | typeof NO_CHANGE>): Promise<{ object: StoredObject; created: boolean }> {
    return this.storage.guaranteedUpdate(key, opts, tryUpdate);
  }

  delete(key: string, opts?: DeleteOptions): Promise<StoredObject> {
    return this.storage.delete(key, opts);
  }

  currentResourceVersion(): Promise<number> {
    return this.storage.currentResourceVersion();
  }

  // ---- reads ----

  async get(key: string, opts: GetOptions = {}): Promise<StoredObject> {
    const rv = parseResourceVersion(opts.resourceVersion);
    // The latest is a quorum read, and the store answers it as cheaply as the cache could.
    if (rv === undefined || !this.owns(key) || !this.ready) return this.storage.get(key, opts);
    let o: StoredObject | undefined;
    try {
      o = await this.whenFresh(rv, key, () => this.cache.get(key));
    } catch (e) {
      // Not reached in time: the store answers "not older than" itself.
      if (e instanceof StorageError && e.code === 'TooLargeResourceVersion') return this.storage.get(key, opts);
      throw e;
    }
    if (!o) throw notFound(key);
    return o;
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const rv = parseResourceVersion(opts.resourceVersion);
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : 0;
    const delegate =
      !this.owns(prefix) ||
      !this.ready ||
      opts.continue !== undefined ||
      opts.resourceVersionMatch === 'Exact' ||
      // The legacy exact form: a resourceVersion with a limit.
      (opts.resourceVersionMatch === undefined && limit > 0 && rv !== undefined && rv > 0);
    if (delegate) return this.storage.list(prefix, opts);
    try {
      return await this.whenFresh(rv, prefix, (revision) => this.fromMemory(prefix, opts, limit, revision));
    } catch (e) {
      if (rv === undefined && e instanceof StorageError && e.code === 'TooLargeResourceVersion') {
        this.fallbacks++;
        this.log.info({ prefix }, 'consistent list: the cache did not catch up in time, served by the store');
        return this.storage.list(prefix, opts);
      }
      throw e;
    }
  }

  async count(prefix: string): Promise<number> {
    if (!this.owns(prefix) || !this.ready) return this.storage.count(prefix);
    return this.countUnder(prefix.endsWith('/') ? prefix : prefix + '/');
  }

  watch(keyOrPrefix: string, opts: WatchOptions = {}): Watch {
    const rv = parseResourceVersion(opts.resourceVersion);
    if (!this.owns(keyOrPrefix)) return this.storage.watch(keyOrPrefix, opts);
    return new CachedWatch(this, keyOrPrefix, opts, rv);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.bookmarkTimer);
    await this.reflector.stop();
    for (const w of [...this.cache.watchers]) w.end('closed');
    for (const r of this.readyWaiters.splice(0)) r();
  }

  // ---- inside ----

  private owns(key: string): boolean {
    return key.startsWith(this.prefix);
  }

  private setReady(r: boolean): void {
    this.ready = r;
    if (r) for (const w of this.readyWaiters.splice(0)) w();
  }

  /**
   * Calls `serve` with the revision the cache's contents under `prefix` stand for, once they are as fresh as
   * a read at `rv` needs (undefined: consistent, as of now; 0: anything), in the same step as the check that
   * says so — so no event can slip in between. Fails with TooLargeResourceVersion after the freshness timeout.
   */
  async whenFresh<T>(rv: number | undefined, prefix: string, serve: (revision: number) => T): Promise<T> {
    if (rv === 0) return serve(this.cache.revision);
    const target = rv ?? (await this.storage.currentResourceVersion());
    if (this.cache.revision >= target) return serve(this.cache.revision);
    const trusted = this.storage.progressRequestsTrusted;
    const poke = trusted ? () => void this.storage.requestWatchProgress() : undefined;
    const deadline = Date.now() + this.freshnessMs;
    for (let round = 0; ; round++) {
      const left = deadline - Date.now();
      if (left <= 0) throw tooLargeResourceVersion(target, this.cache.revision, 1);
      // Untrusted, the store is asked first (the resource may be idle); after a no, events get a moment.
      if (trusted || round > 0) {
        try {
          await this.cache.waitFor(target, trusted ? left : Math.min(left, 50), poke);
        } catch (e) {
          if (!(e instanceof StorageError && e.code === 'TooLargeResourceVersion')) throw e;
        }
        if (this.cache.revision >= target) return serve(this.cache.revision);
        if (trusted) continue;
      }
      // Every key there at `target` last written at or before the cache's revision, and as many as the cache
      // holds: then they are the cache's keys, unchanged, and the cache's contents are the state at `target`.
      const since = this.cache.revision;
      const store = await this.storage.changesSince(prefix, since, target).catch(() => undefined);
      if (this.cache.revision >= target) return serve(this.cache.revision);
      if (store && !store.written && this.cache.revision === since && store.count === this.countUnder(prefix)) {
        this.verified++;
        return serve(target);
      }
    }
  }

  private countUnder(prefix: string): number {
    let n = 0;
    for (const _ of this.cache.under(prefix)) n++;
    return n;
  }

  private fromMemory(prefix: string, opts: ListOptions, limit: number, revision: number): ListResult {
    const p = opts.predicate;
    const keep = !p || p.empty ? undefined : p;
    const items: StoredObject[] = [];
    let lastKey: string | undefined;
    let remaining = 0;
    for (const [k, o] of this.cache.under(prefix)) {
      if (limit > 0 && items.length >= limit) {
        remaining++;
        if (keep) break;
        continue;
      }
      if (keep && !keep.matches(o)) continue;
      items.push(o);
      lastKey = k;
    }
    if (remaining === 0 || lastKey === undefined) return { items, resourceVersion: String(revision) };
    // The rest is read from the store at the cache's revision: the same state the cache holds.
    const token = encodeContinue(lastKey + '\0', prefix, revision);
    return keep ? { items, resourceVersion: String(revision), continue: token } : { items, resourceVersion: String(revision), continue: token, remainingItemCount: remaining };
  }

  /**
   * Registers a watcher starting after `rv`, or — without one — with the objects the cache holds first,
   * standing for revision `at`: replay and live events in one step.
   */
  register(key: string, opts: WatchOptions, rv: number | undefined, at: number, onEnd: (w: CacheWatcher) => void): CacheWatcher | WatchEvent {
    const now = Date.now();
    const startRevision = rv === undefined || rv === 0 ? at : rv;
    if (rv !== undefined && rv > 0) {
      const oldest = this.cache.window.oldestResumable() ?? this.cache.revision;
      if (rv < oldest) return { type: 'ERROR', object: expiredStatus(tooOldResourceVersion(rv, oldest)) };
    }
    const w = new CacheWatcher(
      {
        key,
        predicate: opts.predicate,
        startRevision,
        queueSize: this.queueSize,
        allowBookmarks: opts.allowBookmarks ?? false,
        deadline: opts.timeoutSeconds !== undefined && opts.timeoutSeconds > 0 ? now + opts.timeoutSeconds * 1000 : undefined,
        onEnd: (x) => {
          this.cache.watchers.delete(x);
          onEnd(x);
        },
      },
      now,
      this.bookmarkIntervalMs,
    );
    if (rv === undefined || rv === 0) {
      const prefixOrKey = key.endsWith('/') ? this.cache.under(key) : [[key, this.cache.get(key)] as const];
      w.replayObjects([...prefixOrKey].map(([, o]) => o).filter((o): o is StoredObject => o !== undefined));
    } else {
      w.replayEvents(this.cache.window.since(rv));
    }
    this.cache.watchers.add(w);
    return w;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  get revision(): number {
    return this.cache.revision;
  }

  waitReady(): Promise<void> {
    return this.whenReady();
  }

  /** Falls back to the store for a consistent watch the cache could not serve in time. */
  storeWatch(key: string, opts: WatchOptions): Watch {
    this.fallbacks++;
    return this.storage.watch(key, opts);
  }

  private dispatchBookmarks(): void {
    const now = Date.now();
    for (const w of this.cache.watchers) w.bookmark(this.cache.revision, now, this.bookmarkIntervalMs);
  }
}

/**
 * A watch served by the cache: it waits for the cache to be ready (and, without a resourceVersion, to be
 * as fresh as the store is now), then replays and follows. Stopping it ends a pending read at once.
 */
class CachedWatch implements Watch {
  private watcher: CacheWatcher | undefined;
  private inner: Watch | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly cacher: Cacher,
    private readonly key: string,
    private readonly opts: WatchOptions,
    private readonly rv: number | undefined,
  ) {
    if (opts.timeoutSeconds !== undefined && opts.timeoutSeconds > 0) {
      this.timer = setTimeout(() => this.stop('timeout'), opts.timeoutSeconds * 1000);
      this.timer.unref();
    }
  }

  stop(reason: 'stopped' | 'timeout' = 'stopped'): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.watcher?.end(reason);
    this.inner?.stop();
    this.wake?.();
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    return stoppingIterator(this.run(), () => this.stop());
  }

  /** Resolves `p`, or undefined as soon as the watch is stopped. */
  private untilStopped<T>(p: Promise<T>): Promise<T | undefined> {
    return new Promise<T | undefined>((resolve, reject) => {
      this.wake = () => resolve(undefined);
      p.then(resolve, reject);
    });
  }

  private async *run(): AsyncGenerator<WatchEvent, void, undefined> {
    try {
      await this.untilStopped(this.cacher.waitReady());
      if (this.stopped || this.cacher.isClosed) return;
      const onEnd = (): void => this.wake?.();
      // A watch from a resourceVersion needs no wait: it gets what comes after it.
      const registered =
        this.rv === undefined
          ? await this.untilStopped(this.cacher.whenFresh(undefined, this.key, (at) => (this.stopped ? undefined : this.cacher.register(this.key, this.opts, undefined, at, onEnd))).catch(() => undefined))
          : this.cacher.register(this.key, this.opts, this.rv, this.cacher.revision, onEnd);
      if (this.stopped) {
        if (registered instanceof CacheWatcher) registered.end('stopped');
        return;
      }
      if (registered === undefined) {
        // Not caught up in time: the store itself gives a consistent start.
        this.inner = this.cacher.storeWatch(this.key, this.opts);
        for await (const e of this.inner as AsyncIterable<WatchEvent>) yield e;
        return;
      }
      const r = registered;
      if (!(r instanceof CacheWatcher)) {
        yield r;
        return;
      }
      this.watcher = r;
      if (this.stopped) r.end('stopped');
      for (;;) {
        const e = await r.next();
        if (!e) return;
        yield e;
      }
    } finally {
      this.stop();
    }
  }
}
