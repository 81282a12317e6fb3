// The Storage contract on an etcd v3 store, written after Kubernetes' etcd3 store: every write one Txn —
// compare the object's mod_revision (0 to create) and each guard's, then put or delete it together with its
// companion keys — so nothing is half-written and a conflict is exact; on a failed compare the Txn's other
// branch reads the object back and GuaranteedUpdate goes round again with it. Objects are JSON, their
// resourceVersion the key's mod_revision. Lists, watches and the compactor live in files of their own.
import { pino } from 'pino';
import type { Logger } from 'pino';
import type { EtcdClient } from '../../../etcd-client/etcd-client.js';
import { EtcdClientError } from '../../../etcd-client/errors.js';
import type { Op, OpResult } from '../../../etcd-client/types.js';
import { alreadyExists, guardFailed, notFound, tooLargeResourceVersion } from '../errors.js';
import { NO_CHANGE } from '../interface.js';
import type { CreateOptions, DeleteOptions, GetOptions, Guard, ListOptions, ListResult, ReadWith, Storage, StoredObject, UpdateOptions, Watch, WatchOptions, WriteOptions } from '../interface.js';
import { parseResourceVersion } from '../resource-version.js';
import { fromClientError } from './client-errors.js';
import { decodeObject, encodeObject } from './codec.js';
import { listObjects } from './etcd-list.js';
import { EtcdStorageWatch } from './etcd-watch.js';
import { LeaseManager } from './lease-manager.js';
import type { LeaseManagerOptions } from './lease-manager.js';
import { checkPreconditions } from './preconditions.js';

export interface EtcdStorageOptions {
  readonly client: EtcdClient;
  readonly logger?: Logger;
  readonly leases?: LeaseManagerOptions;
  /** Keys per Range when a list (or a watch's initial state) is read in pages (Kubernetes' maxLimit). */
  readonly pageSize?: number;
}

/** An object as read from the store: its bytes, decoded, and its mod_revision (0: there is none). */
interface State {
  readonly obj: StoredObject | undefined;
  readonly raw: Buffer | undefined;
  readonly rev: number;
  /** UpdateOptions.readWith's keys, read with the object. */
  readonly readWith?: ReadWith;
}

const ABSENT: State = { obj: undefined, raw: undefined, rev: 0 };

function stateOf(r: OpResult | undefined): State {
  const kv = r?.kind === 'range' ? r.range.kvs[0] : undefined;
  return kv ? { obj: decodeObject(kv.key, kv.value, kv.modRevision), raw: kv.value, rev: kv.modRevision } : ABSENT;
}

/** The object's state from a Txn's first result, with the readWith keys' values from the results at `from`. */
function stateWith(results: readonly OpResult[], readWith: readonly string[], from: number): State {
  const state = stateOf(results[0]);
  if (readWith.length === 0) return state;
  const values = new Map<string, StoredObject>();
  readWith.forEach((k, i) => {
    const r = results[from + i];
    const kv = r?.kind === 'range' ? r.range.kvs[0] : undefined;
    if (kv) values.set(k, decodeObject(kv.key, kv.value, kv.modRevision));
  });
  return { ...state, readWith: values };
}

const NOTHING_READ_WITH: ReadWith = new Map();

/** The object as stored at `rev`, decoded afresh (0: not stored, a dry run's answer, with no resourceVersion). */
function stored(key: string, raw: Buffer, rev: number): StoredObject {
  const o = decodeObject(key, raw, rev);
  if (rev === 0) delete o.metadata.resourceVersion;
  return o;
}

/** How often one write re-checks a guard whose key moved (each time is a renewal racing the write). */
const MAX_GUARD_REFRESHES = 10;

export class EtcdStorage implements Storage {
  readonly client: EtcdClient;
  private readonly log: Logger;
  private readonly leases: LeaseManager;
  private readonly pageSize: number;
  private readonly watches = new Set<EtcdStorageWatch>();

  constructor(opts: EtcdStorageOptions) {
    this.client = opts.client;
    this.log = (opts.logger ?? pino({ enabled: false })).child({ component: 'etcd-storage' });
    this.leases = new LeaseManager(opts.client, opts.leases);
    this.pageSize = opts.pageSize ?? 10_000;
  }

  async create(key: string, obj: StoredObject, opts: CreateOptions = {}): Promise<StoredObject> {
    if (obj.metadata.resourceVersion) throw new Error('resourceVersion should not be set on objects to be created');
    const value = encodeObject(obj);
    return this.mapErrors(key, async () => {
      if (opts.dryRun) {
        if ((await this.read(key)).obj) throw alreadyExists(key);
        await this.checkGuards(key, opts.guards);
        return stored(key, value, 0);
      }
      const res = await this.commit(key, 0, opts.ttlSeconds, (lease) => ({ put: { key, value, ...(lease ? { lease } : {}) } }), opts);
      if (!res.ok) throw alreadyExists(key);
      return stored(key, value, res.revision);
    });
  }

  async get(key: string, opts: GetOptions = {}): Promise<StoredObject> {
    const min = parseResourceVersion(opts.resourceVersion);
    return this.mapErrors(key, async () => {
      const r = await this.client.range(key);
      if (min !== undefined && min > r.revision) throw tooLargeResourceVersion(min, r.revision);
      const kv = r.kvs[0];
      if (!kv) throw notFound(key);
      return decodeObject(kv.key, kv.value, kv.modRevision);
    });
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    return this.mapErrors(prefix, () => listObjects(this.client, prefix, opts, this.pageSize));
  }

  async guaranteedUpdate(
    key: string,
    opts: UpdateOptions,
    tryUpdate: (current: StoredObject | undefined, readWith: ReadWith) => Promise<StoredObject | typeof NO_CHANGE>,
  ): Promise<{ object: StoredObject; created: boolean }> {
    const readWith = opts.readWith ?? [];
    return this.mapErrors(key, async () => {
      let state = await this.read(key, readWith);
      for (;;) {
        if (!state.obj && !opts.allowCreate) throw notFound(key);
        checkPreconditions(key, opts.preconditions, state.obj);
        const next = await tryUpdate(state.obj, state.readWith ?? NOTHING_READ_WITH);
        if (next === NO_CHANGE) {
          if (!state.raw) throw notFound(key);
          return { object: stored(key, state.raw, state.rev), created: false };
        }
        const value = encodeObject(next);
        // Written as it already is: no write, and the resourceVersion stays (a no-op patch changes nothing).
        if (state.raw?.equals(value)) return { object: stored(key, state.raw, state.rev), created: false };
        if (opts.dryRun) {
          await this.checkGuards(key, opts.guards);
          return { object: stored(key, value, state.rev), created: !state.obj };
        }
        const res = await this.commit(key, state.rev, opts.ttlSeconds, (lease) => ({ put: { key, value, ...(lease ? { lease } : {}) } }), opts, readWith);
        if (res.ok) return { object: stored(key, value, res.revision), created: !state.obj };
        this.log.debug({ key }, 'GuaranteedUpdate failed because of a conflict, going to retry');
        state = res.current;
      }
    });
  }

  async delete(key: string, opts: DeleteOptions = {}): Promise<StoredObject> {
    return this.mapErrors(key, async () => {
      let state = await this.read(key);
      for (;;) {
        if (!state.obj || !state.raw) throw notFound(key);
        checkPreconditions(key, opts.preconditions, state.obj);
        if (opts.validate) await opts.validate(state.obj);
        if (opts.dryRun) {
          await this.checkGuards(key, opts.guards);
          return stored(key, state.raw, state.rev);
        }
        const raw = state.raw;
        const res = await this.commit(key, state.rev, undefined, () => ({ deleteRange: { key } }), opts);
        // The object as it was, with the revision of its deletion.
        if (res.ok) return stored(key, raw, res.revision);
        this.log.debug({ key }, 'deletion failed because of a conflict, going to retry');
        state = res.current;
      }
    });
  }

  watch(keyOrPrefix: string, opts: WatchOptions = {}): Watch {
    const from = parseResourceVersion(opts.resourceVersion);
    const w = new EtcdStorageWatch({ client: this.client, pageSize: this.pageSize, log: this.log, onEnd: (x) => this.watches.delete(x) }, keyOrPrefix, opts, from);
    this.watches.add(w);
    return w;
  }

  async currentResourceVersion(): Promise<number> {
    // Any linearizable read carries the store's revision; one absent key costs the least.
    return this.mapErrors(undefined, async () => (await this.client.range('compact_rev_key', { keysOnly: true })).revision);
  }

  async count(prefix: string): Promise<number> {
    const p = prefix.endsWith('/') ? prefix : prefix + '/';
    return this.mapErrors(p, async () => (await this.client.range(p, { prefix: true, countOnly: true })).count);
  }

  /** Asks the store for a progress notification on this client's watches (what the watch cache waits on). */
  requestWatchProgress(): Promise<void> {
    this.client.requestProgress();
    return Promise.resolve();
  }

  /** Whether the store's answers to progress requests can be relied on (the client was told so). */
  get progressRequestsTrusted(): boolean {
    return this.client.trustsProgressRequests;
  }

  /**
   * As of `revision`: how many keys are under `prefix`, and whether any of them was written after `since`.
   * Two small answers (the store walks the keys, but sends at most one of them back).
   */
  async changesSince(prefix: string, since: number, revision: number): Promise<{ written: boolean; count: number }> {
    return this.mapErrors(prefix, async () => {
      const [newer, all] = await Promise.all([
        this.client.range(prefix, { prefix: true, revision, keysOnly: true, minModRevision: since + 1, limit: 1 }),
        this.client.range(prefix, { prefix: true, revision, countOnly: true }),
      ]);
      return { written: newer.kvs.length > 0, count: all.count };
    });
  }

  /** Ends this storage's watches; the client is its owner's to close. */
  close(): Promise<void> {
    for (const w of [...this.watches]) w.stop();
    return Promise.resolve();
  }

  // ---- writes ----

  /** The object, and the readWith keys in the same linearizable read (one read-only Txn). */
  private async read(key: string, readWith: readonly string[] = []): Promise<State> {
    if (readWith.length > 0) {
      const res = await this.client.txn({ compare: [], success: [{ range: { key } }, ...readWith.map((k) => ({ range: { key: k } }))] });
      return stateWith(res.results, readWith, 1);
    }
    const r = await this.client.range(key);
    const kv = r.kvs[0];
    return kv ? { obj: decodeObject(kv.key, kv.value, kv.modRevision), raw: kv.value, rev: kv.modRevision } : ABSENT;
  }

  /**
   * One Txn: if the key is still at `expectRev` (0: absent) and every guard at its mod_revision, do `op`
   * and the companions' puts and deletes; otherwise read the key (and the guards) back. A failed guard
   * fails the write; a moved key is the caller's to retry with. A lease the store no longer has is
   * replaced once. The readWith keys are read back with the key.
   */
  private async commit(
    key: string,
    expectRev: number,
    ttlSeconds: number | undefined,
    op: (lease: string | undefined) => Op,
    w: WriteOptions,
    readWith: readonly string[] = [],
  ): Promise<{ ok: true; revision: number } | { ok: false; current: State }> {
    const guards = [...(w.guards ?? [])];
    const companions: Op[] = (w.companions ?? []).map((c) => (c.value === null ? { deleteRange: { key: c.key } } : { put: { key: c.key, value: c.value } }));
    const failure: Op[] = [{ range: { key } }, ...guards.map((g) => ({ range: { key: g.key, keysOnly: true } })), ...readWith.map((k) => ({ range: { key: k } }))];
    let refreshes = 0;
    for (let attempt = 0; ; attempt++) {
      const compare = [
        { key, target: 'MOD' as const, result: 'EQUAL' as const, revision: expectRev },
        ...guards.map((g) => ({ key: g.key, target: 'MOD' as const, result: 'EQUAL' as const, revision: g.modRevision })),
      ];
      const lease = ttlSeconds ? await this.leases.lease(ttlSeconds) : undefined;
      try {
        const res = await this.client.txn({ compare, success: [op(lease), ...companions], failure });
        if (res.succeeded) return { ok: true, revision: res.revision };
        let refreshed = false;
        for (const [i, g] of guards.entries()) {
          const r = res.results[i + 1];
          const mod = r?.kind === 'range' ? (r.range.kvs[0]?.modRevision ?? 0) : 0;
          if (mod === g.modRevision) continue;
          // A guard that can be checked again (a renewed Lease) is, a bounded number of times.
          if (g.refresh === undefined || refreshes >= MAX_GUARD_REFRESHES) throw guardFailed(key, g);
          guards[i] = await g.refresh();
          refreshes++;
          refreshed = true;
        }
        if (refreshed) continue;
        return { ok: false, current: stateWith(res.results, readWith, 1 + guards.length) };
      } catch (e) {
        if (lease && attempt === 0 && e instanceof EtcdClientError && e.code === 'ETCD_LEASE_NOT_FOUND') {
          this.leases.forget(lease);
          continue;
        }
        throw e;
      }
    }
  }

  /** For a dry run: every guard still at its mod_revision. */
  private async checkGuards(key: string, guards: readonly Guard[] | undefined): Promise<void> {
    for (const g of guards ?? []) {
      const kv = (await this.client.range(g.key, { keysOnly: true })).kvs[0];
      if ((kv?.modRevision ?? 0) !== g.modRevision) throw guardFailed(key, g);
    }
  }

  private async mapErrors<T>(key: string | undefined, f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      throw fromClientError(e, key);
    }
  }
}
