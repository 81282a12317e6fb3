// The etcd client against a real etcd 3.4 and a real Setpoint store, one member each: every call, etcd's
// errors as typed values, message limits, and watches (multiplexing, prevKv, progress, fragments,
// compaction, a slow consumer). The same assertions run on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdClient } from '../../src/etcd-client/etcd-client.js';
import { EtcdClientError } from '../../src/etcd-client/errors.js';
import type { WatchBatch } from '../../src/etcd-client/watch.js';
import { STORE_KINDS, StoreTestCluster } from './helpers/store-cluster.js';

async function failure(p: Promise<unknown>): Promise<EtcdClientError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof EtcdClientError) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
}

/** Takes batches until `done` says enough (or the timeout passes). */
async function take(w: AsyncIterable<WatchBatch>, done: (all: WatchBatch[]) => boolean, timeoutMs = 20_000): Promise<WatchBatch[]> {
  const all: WatchBatch[] = [];
  const it = w[Symbol.asyncIterator]();
  const deadline = Date.now() + timeoutMs;
  while (!done(all)) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`watch: gave up after ${timeoutMs} ms with ${all.length} batches`);
    const r = await Promise.race([it.next(), new Promise<'timeout'>((res) => setTimeout(() => res('timeout'), left))]);
    if (r === 'timeout') continue;
    if (r.done) break;
    all.push(r.value);
  }
  return all;
}

async function waitUntil(cond: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const eventsOf = (bs: WatchBatch[]): { type: string; key: string; value: string; rev: number; prev?: string }[] =>
  bs.flatMap((b) => b.events.map((e) => ({ type: e.type, key: e.kv.key.toString(), value: e.kv.value.toString(), rev: e.kv.modRevision, ...(e.prevKv ? { prev: e.prevKv.value.toString() } : {}) })));

describe.each(STORE_KINDS)('etcd client on %s', (kind) => {
  let cluster: StoreTestCluster;
  let c: EtcdClient;

  beforeAll(async () => {
    cluster = await StoreTestCluster.start(kind);
    c = cluster.client();
  });
  afterAll(async () => cluster?.stop());

  it('puts, ranges, deletes and counts', async () => {
    const p1 = await c.put('kv/a', '1');
    await c.put('kv/b', '2');
    const p3 = await c.put('kv/a', '3', { prevKv: true });
    expect(p3.prevKv?.value.toString()).toBe('1');
    expect(p3.revision).toBe(p1.revision + 2);

    const all = await c.range('kv/', { prefix: true });
    expect(all.kvs.map((kv) => [kv.key.toString(), kv.value.toString(), kv.version])).toEqual([['kv/a', '3', 2], ['kv/b', '2', 1]]);
    expect(all.count).toBe(2);
    expect(all.revision).toBe(p3.revision);

    const page = await c.range('kv/', { prefix: true, limit: 1 });
    expect([page.kvs.length, page.more, page.count]).toEqual([1, true, 2]);
    const counted = await c.range('kv/', { prefix: true, countOnly: true });
    expect([counted.kvs.length, counted.count]).toEqual([0, 2]);
    // min_mod_revision filters before the limit (count still counts every key in the range).
    const newer = await c.range('kv/', { prefix: true, minModRevision: p3.revision, keysOnly: true, limit: 1 });
    expect([newer.kvs.map((kv) => kv.key.toString()), newer.count]).toEqual([['kv/a'], 2]);
    const old = await c.range('kv/a', { revision: p1.revision });
    expect(old.kvs[0]?.value.toString()).toBe('1');

    const del = await c.deleteRange('kv/', { prefix: true, prevKv: true });
    expect(del.deleted).toBe(2);
    expect(del.prevKvs.map((kv) => kv.key.toString()).sort()).toEqual(['kv/a', 'kv/b']);
    expect(await c.get('kv/a')).toBeUndefined();
  });

  it('reads and deletes a single key alone, never the keys after it', async () => {
    await c.put('one/b', '1');
    await c.put('one/c', '2');
    expect((await c.range('one/a')).kvs).toEqual([]);
    expect((await c.deleteRange('one/a')).deleted).toBe(0);
    const t = await c.txn({ compare: [], success: [{ range: { key: 'one/a' } }, { deleteRange: { key: 'one/a' } }] });
    expect(t.results).toMatchObject([{ kind: 'range', range: { kvs: [] } }, { kind: 'deleteRange', deleted: 0 }]);
    const w = c.watch('one/a', { startRevision: 1 });
    await c.put('one/a', 'mine');
    const got = eventsOf(await take(w, (bs) => eventsOf(bs).length >= 1));
    expect(got.map((e) => e.key)).toEqual(['one/a']);
    w.cancel();
    expect((await c.range('one/', { prefix: true })).count).toBe(3);
  });

  it('runs transactions: compares, both branches, results per op', async () => {
    const created = await c.txn({
      compare: [{ key: 'txn/x', target: 'MOD', result: 'EQUAL', revision: 0 }],
      success: [{ put: { key: 'txn/x', value: 'v1' } }, { put: { key: 'txn/y', value: 'side' } }],
      failure: [{ range: { key: 'txn/x' } }],
    });
    expect(created.succeeded).toBe(true);
    expect(created.results.map((r) => r.kind)).toEqual(['put', 'put']);
    const again = await c.txn({
      compare: [{ key: 'txn/x', target: 'MOD', result: 'EQUAL', revision: 0 }],
      success: [{ put: { key: 'txn/x', value: 'v2' } }],
      failure: [{ range: { key: 'txn/x' } }],
    });
    expect(again.succeeded).toBe(false);
    const r = again.results[0];
    expect(r?.kind === 'range' && r.range.kvs[0]?.modRevision).toBe(created.revision);
    const byValue = await c.txn({ compare: [{ key: 'txn/x', target: 'VALUE', result: 'EQUAL', value: 'v1' }], success: [{ deleteRange: { key: 'txn/', prefix: true } }] });
    expect(byValue.succeeded).toBe(true);
    expect(byValue.results[0]).toMatchObject({ kind: 'deleteRange', deleted: 2 });
  });

  it('grants leases and attaches keys to them; reports status', async () => {
    const lease = await c.leaseGrant(60);
    expect(lease.ttl).toBe(60);
    await c.put('lease/k', 'v', { lease: lease.id });
    expect((await c.get('lease/k'))?.lease).toBe(lease.id);
    await c.leaseRevoke(lease.id);
    expect(await c.get('lease/k')).toBeUndefined();
    const st = await c.status();
    expect(st.version).toBe('3.4.23');
    expect(st.leader).toBe(st.memberId);
    expect(st.revision).toBeGreaterThan(1);
  });

  it("returns etcd's errors as typed values with etcd's messages", async () => {
    const { revision } = await c.put('err/k', 'v');
    await c.put('err/k', 'w');
    await c.compact(revision + 1);
    const compacted = await failure(c.range('err/k', { revision }));
    expect([compacted.code, compacted.message]).toEqual(['ETCD_COMPACTED', 'etcdserver: mvcc: required revision has been compacted']);
    expect((await failure(c.compact(revision))).code).toBe('ETCD_COMPACTED');
    const future = await failure(c.range('err/k', { revision: revision + 1000 }));
    expect([future.code, future.message]).toEqual(['ETCD_FUTURE_REV', 'etcdserver: mvcc: required revision is a future revision']);
    const dup = await failure(c.txn({ compare: [], success: [{ put: { key: 'err/d', value: '1' } }, { put: { key: 'err/d', value: '2' } }] }));
    expect([dup.code, dup.message]).toEqual(['ETCD_DUPLICATE_KEY', 'etcdserver: duplicate key given in txn request']);
    const many = await failure(c.txn({ compare: [], success: Array.from({ length: 129 }, (_, i) => ({ put: { key: `err/m${i}`, value: 'x' } })) }));
    expect([many.code, many.message]).toEqual(['ETCD_TOO_MANY_OPS', 'etcdserver: too many operations in txn request']);
    const noLease = await failure(c.put('err/l', 'v', { lease: '12345' }));
    expect([noLease.code, noLease.message]).toEqual(['ETCD_LEASE_NOT_FOUND', 'etcdserver: requested lease not found']);
    const big = await failure(c.put('err/big', Buffer.alloc(1600 * 1024, 1)));
    expect([big.code, big.message]).toEqual(['ETCD_REQUEST_TOO_LARGE', 'etcdserver: request is too large']);
    expect(big.notSent).toBe(false);
  });

  it('refuses a response over its receive limit', async () => {
    const small = cluster.client();
    const tight = new EtcdClient({ endpoints: cluster.endpoints(), maxReceiveBytes: 256 * 1024 });
    try {
      for (let i = 0; i < 4; i++) await small.put(`limit/${i}`, Buffer.alloc(100 * 1024, 2));
      const e = await failure(tight.range('limit/', { prefix: true }));
      expect(e.code).toBe('ETCD_MESSAGE_TOO_LARGE');
      expect((await tight.range('limit/', { prefix: true, limit: 2 })).kvs).toHaveLength(2);
    } finally {
      tight.close();
    }
  });

  it('gives up on an unreachable store within the call deadline', async () => {
    const dead = new EtcdClient({ endpoints: ['http://127.0.0.1:9'], callTimeoutMs: 1500 });
    try {
      const t0 = Date.now();
      const e = await failure(dead.range('x'));
      expect(['ETCD_UNAVAILABLE', 'ETCD_DEADLINE_EXCEEDED']).toContain(e.code);
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      dead.close();
    }
  });

  it('serves many watches on one stream, with prevKv, in revision order', async () => {
    const streamsBefore = await cluster.metric(0, 'etcd_debugging_mvcc_watch_stream_total');
    const w = cluster.client();
    const from = (await c.put('mux/start', 'x')).revision + 1;
    const watches = Array.from({ length: 20 }, (_, i) => w.watch(`mux/${i % 4}/`, { prefix: true, prevKv: true, startRevision: from }));
    await c.put('mux/3/a', 'one');
    await c.put('mux/3/a', 'two');
    await c.put('mux/0/b', 'zero');
    const got = await take(watches[3]!, (bs) => eventsOf(bs).length >= 2);
    expect(eventsOf(got).map((e) => [e.type, e.key, e.value, e.prev])).toEqual([['PUT', 'mux/3/a', 'one', undefined], ['PUT', 'mux/3/a', 'two', 'one']]);
    const zero = await take(watches[4]!, (bs) => eventsOf(bs).length >= 1);
    expect(eventsOf(zero).map((e) => e.key)).toEqual(['mux/0/b']);
    expect(w.watchCount).toBe(20);
    // Twenty watches, one stream (a stream of another client may still be closing: wait for the count).
    await waitUntil(async () => (await cluster.metric(0, 'etcd_debugging_mvcc_watch_stream_total')) === streamsBefore + 1);
    for (const x of watches) x.cancel();
    expect(w.watchCount).toBe(0);
  });

  it('answers a progress request on every synced watch', async () => {
    const w = c.watch('progress/', { prefix: true });
    await c.put('elsewhere/p', '1');
    const head = (await c.put('elsewhere/p', '2')).revision;
    const got = await take(w, (bs) => {
      if (!bs.some((b) => b.progress && b.revision >= head)) c.requestProgress();
      return bs.some((b) => b.progress && b.revision >= head);
    });
    expect(got.every((b) => b.events.length === 0 && b.requested)).toBe(true);
    w.cancel();
  });

  it('loses no event that an answer to a progress request overtook (etcd-io/etcd#15220)', async () => {
    // Other watches on the stream, and watches created from the past right before each request, are
    // where etcd 3.4.23 (and Setpoint's store) answer ahead of the events.
    const own = cluster.client();
    const start = (await c.put('po/start', 'x')).revision + 1;
    const w = own.watch('po/', { prefix: true, startRevision: start });
    const noise = Array.from({ length: 50 }, () => own.watch('po/', { prefix: true }));
    const revs: number[] = [];
    for (let i = 0; i < 100; i++) {
      revs.push((await c.put(`po/k${i % 5}`, String(i))).revision);
      noise.push(own.watch('po/', { prefix: true, startRevision: start }));
      own.requestProgress();
    }
    const got = await take(w, (bs) => eventsOf(bs).length >= 100);
    expect(eventsOf(got).map((e) => e.rev)).toEqual(revs);
    // Answers it could not rely on were passed on as claims, without moving the watch past anything.
    expect(got.filter((b) => b.progress).every((b) => b.requested)).toBe(true);
    for (const n of noise) n.cancel();
    w.cancel();
  });

  it('puts fragments of a large watch response back together', async () => {
    // Four 700 KiB values are one catch-up response of 2.8 MiB: over the server's split size and over the
    // client's 2.5 MiB message limit, so only fragments get it through.
    const w = new EtcdClient({ endpoints: cluster.endpoints(), maxReceiveBytes: 2.5 * 1024 * 1024 });
    try {
      const first = (await c.put('frag/0', Buffer.alloc(700 * 1024, 'a'))).revision;
      for (let i = 1; i < 4; i++) await c.put(`frag/${i}`, Buffer.alloc(700 * 1024, 'a'));
      const watch = w.watch('frag/', { prefix: true, startRevision: first });
      const got = eventsOf(await take(watch, (bs) => eventsOf(bs).length >= 4));
      expect(got.map((e) => [e.key, e.value.length, e.rev])).toEqual([0, 1, 2, 3].map((i) => [`frag/${i}`, 700 * 1024, first + i]));
      watch.cancel();
    } finally {
      w.close();
    }
  });

  it('ends a watch from a compacted revision with the compact revision', async () => {
    const { revision } = await c.put('cmp/k', '1');
    const head = (await c.put('cmp/k', '2')).revision;
    await c.compact(head);
    const w = c.watch('cmp/', { prefix: true, startRevision: revision });
    const e = await failure(take(w, () => false));
    expect([e.code, e.compactRevision]).toEqual(['ETCD_COMPACTED', head]);
  });

  it('cuts a catch-up response at its bound between revisions and fetches the rest later', async () => {
    const slow = new EtcdClient({ endpoints: cluster.endpoints(), watchBufferEvents: 40 });
    try {
      const start = (await c.put('cut/start', 'x')).revision + 1;
      for (let i = 0; i < 200; i++) await c.put(`cut/${i % 5}`, String(i));
      // Created after the puts: the store answers with the history so far, far more than 40 events at once.
      const w = slow.watch('cut/', { prefix: true, startRevision: start });
      const first = await take(w, (bs) => bs.length >= 1);
      const taken = eventsOf(first).length;
      expect(taken).toBeLessThanOrEqual(41);
      expect(taken + w.stats.bufferedEvents).toBeLessThanOrEqual(41);
      const rest = eventsOf(await take(w, (bs) => eventsOf(bs).length >= 200 - taken));
      const got = [...eventsOf(first), ...rest].map((e) => Number(e.value));
      expect(got).toEqual(Array.from({ length: 200 }, (_, i) => i));
      w.cancel();
    } finally {
      slow.close();
    }
  });

  it('sets a watch whose consumer lags aside and catches it up without a gap', async () => {
    const slow = new EtcdClient({ endpoints: cluster.endpoints(), watchBufferEvents: 40 });
    try {
      const start = (await c.put('slow/start', 'x')).revision + 1;
      const w = slow.watch('slow/', { prefix: true, startRevision: start });
      for (let i = 0; i < 300; i++) await c.put(`slow/${i % 7}`, String(i));
      // Nobody reads meanwhile: the watch holds at most its bound plus the one revision that crossed it, even
      // when its create is answered late and the store sends the puts so far as one catch-up response.
      expect(w.stats.bufferedEvents).toBeLessThanOrEqual(41);
      expect(w.stats.suspensions).toBeGreaterThan(0);
      const got = eventsOf(await take(w, (bs) => eventsOf(bs).length >= 300));
      expect(got.map((e) => e.rev)).toEqual(Array.from({ length: 300 }, (_, i) => start + i));
      expect(got.map((e) => e.value)).toEqual(Array.from({ length: 300 }, (_, i) => String(i)));
      w.cancel();
    } finally {
      slow.close();
    }
  });
});
