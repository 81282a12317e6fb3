// The memory of one resource: its objects in key order (frozen: every reader shares them), the window of
// recent events, the revision the cache has caught up to (moved by events and by the store's progress
// notifications), waits for a revision, and the watchers an event is handed to as it is taken in.
import btree from 'sorted-btree';
import { tooLargeResourceVersion } from '../errors.js';
import type { StoredObject } from '../interface.js';
import type { CacheWatcher } from './cache-watcher.js';
import { EventWindow } from './event-window.js';
import type { CacheEvent, WindowOptions } from './event-window.js';

type BTreeClass = typeof btree.default;
// sorted-btree is CommonJS: Node hands the exports object, vitest may hand the class.
const BTree: BTreeClass = (btree as unknown as { default?: BTreeClass }).default ?? (btree as unknown as BTreeClass);
/** Keys are ASCII: plain string order is etcd's byte order. */
const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

interface Waiter {
  readonly revision: number;
  readonly resolve: () => void;
}

export class WatchCache {
  private objects = new BTree<string, StoredObject>(undefined, compareKeys);
  readonly window: EventWindow;
  private rev = 0;
  private readonly waiters = new Set<Waiter>();
  readonly watchers = new Set<CacheWatcher>();
  /** Watchers terminated for falling behind, since the cache started. */
  terminated = 0;

  constructor(
    windowOptions: WindowOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.window = new EventWindow(windowOptions);
  }

  /** Every event up to this revision is in the cache. */
  get revision(): number {
    return this.rev;
  }

  get size(): number {
    return this.objects.size;
  }

  get(key: string): StoredObject | undefined {
    return this.objects.get(key);
  }

  /** The objects under `prefix` from `from` on (inclusive), in key order. */
  *under(prefix: string, from: string = prefix): Generator<[string, StoredObject]> {
    for (const [k, v] of this.objects.entries(from)) {
      if (!k.startsWith(prefix)) return;
      yield [k, v];
    }
  }

  /**
   * A (re)list: the objects as they are at `revision`. Every watcher ends (they watch again, from the
   * revision they last saw, and are served from the new window or told it is too old), as Kubernetes'
   * cacher terminates all watchers when it relists.
   */
  replace(items: readonly StoredObject[], keyOf: (o: StoredObject) => string, revision: number): void {
    const next = new BTree<string, StoredObject>(undefined, compareKeys);
    for (const o of items) next.set(keyOf(o), deepFreeze(o));
    this.objects = next;
    this.window.reset(revision);
    for (const w of [...this.watchers]) w.end('closed');
    this.advance(revision);
  }

  /** An event from the store: the cache, the window, then every watcher it concerns. */
  apply(type: CacheEvent['type'], key: string, object: StoredObject, revision: number): void {
    const prevObject = this.objects.get(key);
    deepFreeze(object);
    if (type === 'DELETED') this.objects.delete(key);
    else this.objects.set(key, object);
    const e: CacheEvent = { type, key, object, prevObject, revision, time: this.now() };
    this.window.push(e);
    this.rev = Math.max(this.rev, revision);
    for (const w of this.watchers) if (!w.add(e)) this.terminated++;
    this.release();
  }

  /** A progress notification: nothing under the prefix changed up to `revision`. */
  progress(revision: number): void {
    if (revision <= this.rev) return;
    this.advance(revision);
  }

  private advance(revision: number): void {
    this.rev = Math.max(this.rev, revision);
    this.release();
  }

  private release(): void {
    for (const w of this.waiters) {
      if (w.revision <= this.rev) {
        this.waiters.delete(w);
        w.resolve();
      }
    }
  }

  /**
   * Resolves once the cache has reached `revision`; after `timeoutMs` fails with Kubernetes'
   * TooLargeResourceVersion (retry after a second). `whileWaiting` runs every `everyMs` meanwhile.
   */
  async waitFor(revision: number, timeoutMs: number, whileWaiting?: () => void, everyMs = 100): Promise<void> {
    if (revision <= this.rev) return;
    let waiter: Waiter | undefined;
    let poke: NodeJS.Timeout | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        waiter = { revision, resolve };
        this.waiters.add(waiter);
        timer = setTimeout(() => reject(tooLargeResourceVersion(revision, this.rev, 1)), timeoutMs);
        if (whileWaiting) {
          whileWaiting();
          poke = setInterval(whileWaiting, everyMs);
        }
      });
    } finally {
      if (waiter) this.waiters.delete(waiter);
      clearTimeout(timer);
      clearInterval(poke);
    }
  }
}
