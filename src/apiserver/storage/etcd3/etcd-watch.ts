// A storage watch straight on the store, as Kubernetes' etcd3 watcher makes it: without a resourceVersion (or
// "0") the objects there now come first as ADDED, then a store watch from the revision after with prevKV
// turns PUTs and DELETEs into ADDED/MODIFIED/DELETED, the predicate applied to the object before and after
// (leaving the selection is a DELETED of the old object, entering it an ADDED). Progress notifications are
// BOOKMARKs; a compacted start ends the watch with a 410 ERROR. It is pulled, not pushed: while its consumer
// does not ask for more, the client's watch fills to its bound and is then set aside on the store.
import type { Logger } from 'pino';
import type { EtcdClient } from '../../../etcd-client/etcd-client.js';
import { EtcdClientError } from '../../../etcd-client/errors.js';
import { prefixEnd } from '../../../etcd-client/types.js';
import type { ClientWatch, WatchEvent as EtcdEvent } from '../../../etcd-client/watch.js';
import { expiredStatus, internalErrorStatus, tooOldResourceVersion } from '../errors.js';
import type { Predicate, StoredObject, Watch, WatchEvent, WatchOptions } from '../interface.js';
import { decodeObject } from './codec.js';
import { stoppingIterator } from '../watch-iterator.js';

export interface EtcdWatchContext {
  readonly client: EtcdClient;
  readonly pageSize: number;
  readonly log: Logger;
  /** Called once when the watch ends, however it ends. */
  readonly onEnd: (w: EtcdStorageWatch) => void;
}

function matcher(p: Predicate | undefined): (o: StoredObject) => boolean {
  return !p || p.empty ? () => true : (o) => p.matches(o);
}

export class EtcdStorageWatch implements Watch {
  private clientWatch: ClientWatch | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly matches: (o: StoredObject) => boolean;
  private readonly acceptAll: boolean;

  constructor(
    private readonly ctx: EtcdWatchContext,
    private readonly key: string,
    private readonly opts: WatchOptions,
    /** The parsed resourceVersion: undefined or 0 for "current state first". */
    private readonly fromRevision: number | undefined,
  ) {
    this.matches = matcher(opts.predicate);
    this.acceptAll = !opts.predicate || opts.predicate.empty;
    if (opts.timeoutSeconds !== undefined && opts.timeoutSeconds > 0) {
      this.timer = setTimeout(() => this.stop(), opts.timeoutSeconds * 1000);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.clientWatch?.cancel();
    this.ctx.onEnd(this);
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    return stoppingIterator(this.run(), () => this.stop());
  }

  private openWatch(startRevision: number): ClientWatch {
    const recursive = this.key.endsWith('/');
    this.clientWatch = this.ctx.client.watch(this.key, {
      ...(recursive ? { rangeEnd: prefixEnd(this.key) } : {}),
      startRevision,
      prevKv: true,
      progressNotify: this.opts.allowBookmarks ?? false,
    });
    if (this.stopped) this.clientWatch.cancel();
    return this.clientWatch;
  }

  private async *run(): AsyncGenerator<WatchEvent, void, undefined> {
    let requested = this.fromRevision ?? 0;
    try {
      let cw: ClientWatch;
      if (requested === 0) {
        const start = yield* this.currentState();
        if (start === undefined) return;
        requested = start.revision;
        cw = start.watch;
      } else {
        cw = this.openWatch(requested + 1);
      }
      for await (const batch of cw) {
        if (batch.progress) {
          // A claim the store may have sent ahead of events is no bookmark: a client resuming from it could miss them.
          if (this.opts.allowBookmarks && !batch.requested) yield { type: 'BOOKMARK', object: { metadata: { resourceVersion: String(batch.revision) } } };
          continue;
        }
        for (const e of batch.events) {
          const ev = this.transform(e);
          if (ev) yield ev;
        }
        if (this.stopped) return;
      }
    } catch (e) {
      if (this.stopped) return;
      if (e instanceof EtcdClientError && e.code === 'ETCD_COMPACTED') {
        yield { type: 'ERROR', object: expiredStatus(tooOldResourceVersion(requested, e.compactRevision ?? 0)) };
      } else {
        const message = e instanceof Error ? e.message : String(e);
        this.ctx.log.warn({ key: this.key, err: message }, 'watch chan error');
        yield { type: 'ERROR', object: internalErrorStatus(message) };
      }
    } finally {
      this.stop();
    }
  }

  /** The objects there now, as ADDED, read in pages at one revision; the store watch starts right after it. */
  private async *currentState(): AsyncGenerator<WatchEvent, { revision: number; watch: ClientWatch } | undefined, undefined> {
    const recursive = this.key.endsWith('/');
    let from = this.key;
    let revision = 0;
    let watch: ClientWatch | undefined;
    for (;;) {
      const r = await this.ctx.client.range(from, recursive ? { rangeEnd: prefixEnd(this.key), limit: this.ctx.pageSize, revision } : { revision });
      if (!watch) {
        revision = r.revision;
        watch = this.openWatch(revision + 1);
      }
      for (const kv of r.kvs) {
        const o = decodeObject(kv.key, kv.value, kv.modRevision);
        if (this.matches(o)) yield { type: 'ADDED', object: o };
        if (this.stopped) return undefined;
      }
      const last = r.kvs.at(-1);
      if (!r.more || !recursive || !last) return { revision, watch };
      from = last.key.toString() + '\0';
    }
  }

  private transform(e: EtcdEvent): WatchEvent | undefined {
    const rev = e.kv.modRevision;
    if (e.type === 'DELETE') {
      if (!e.prevKv) throw new Error(`etcd event received with PrevKv=nil (key=${e.kv.key.toString()}, modRevision=${rev}, type=DELETE)`);
      // The object as it was, at the revision of its deletion.
      const old = decodeObject(e.kv.key, e.prevKv.value, rev);
      return this.matches(old) ? { type: 'DELETED', object: old } : undefined;
    }
    const cur = decodeObject(e.kv.key, e.kv.value, rev);
    if (e.kv.createRevision === rev) return this.matches(cur) ? { type: 'ADDED', object: cur } : undefined;
    if (this.acceptAll) return { type: 'MODIFIED', object: cur };
    const curPasses = this.matches(cur);
    const old = e.prevKv ? decodeObject(e.kv.key, e.prevKv.value, rev) : undefined;
    const oldPasses = old !== undefined && this.matches(old);
    if (curPasses && oldPasses) return { type: 'MODIFIED', object: cur };
    if (curPasses) return { type: 'ADDED', object: cur };
    if (oldPasses) return { type: 'DELETED', object: old };
    return undefined;
  }
}
