// What keeps one resource's watch cache in step with the store: a consistent list, then one store watch from
// its revision (with progress notifications) whose events go into the cache as they come. A watch that
// ends is started again from the cache's revision; one that hits compaction (410) means history the cache
// never saw is gone, so it lists again and the cache starts over (its watchers end and come back).
import type { Logger } from 'pino';
import type { Storage, StoredObject, Watch, WatchEvent } from '../interface.js';
import type { WatchCache } from './watch-cache.js';

export interface ReflectorOptions {
  readonly storage: Storage;
  readonly prefix: string;
  readonly cache: WatchCache;
  readonly log: Logger;
  /** The key an object is stored under (the cache's map key). */
  readonly keyOf: (o: StoredObject) => string;
  readonly onReady: (ready: boolean) => void;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export class Reflector {
  private stopped = false;
  private watch: Watch | undefined;
  private running: Promise<void> | undefined;
  /** Store watches started (the first, and one per re-establishment or relist). */
  watchesStarted = 0;
  relists = 0;

  constructor(private readonly o: ReflectorOptions) {}

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watch?.stop();
    await this.running;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        const list = await this.o.storage.list(this.o.prefix);
        if (this.stopped) return;
        this.o.cache.replace(list.items, this.o.keyOf, Number(list.resourceVersion));
        this.o.onReady(true);
        failures = 0;
        await this.watchUntilExpired();
        if (this.stopped) return;
        this.relists++;
        this.o.onReady(false);
        this.o.log.info({ prefix: this.o.prefix, revision: this.o.cache.revision }, 'watch cache: history compacted past the cache, relisting');
      } catch (e) {
        failures++;
        this.o.log.warn({ prefix: this.o.prefix, err: e instanceof Error ? e.message : String(e) }, 'watch cache: list failed, trying again');
        await sleep(Math.min(5000, 100 * 2 ** Math.min(failures, 6)));
      }
    }
  }

  /** Watches from the cache's revision, again and again, until the store says that revision is gone. */
  private async watchUntilExpired(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      this.watchesStarted++;
      const w = this.o.storage.watch(this.o.prefix, { resourceVersion: String(this.o.cache.revision), allowBookmarks: true });
      this.watch = w;
      let error: WatchEvent | undefined;
      for await (const e of w as AsyncIterable<WatchEvent>) {
        failures = 0;
        if (e.type === 'ERROR') {
          error = e;
          break;
        }
        const rev = Number(e.object.metadata.resourceVersion);
        if (e.type === 'BOOKMARK') this.o.cache.progress(rev);
        else this.o.cache.apply(e.type, this.o.keyOf(e.object), e.object, rev);
      }
      w.stop();
      if (this.stopped) return;
      if (error && (error.object as { code?: unknown }).code === 410) return;
      failures++;
      this.o.log.warn({ prefix: this.o.prefix, revision: this.o.cache.revision, error: error?.object['message'] }, 'watch cache: store watch ended, starting it again');
      await sleep(Math.min(2000, 50 * 2 ** Math.min(failures, 6)));
    }
  }
}
