// The MVCC store's rules, one by one, with etcd 3.4's exact errors.
import { describe, expect, it } from 'vitest';
import { rm, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { KvStore } from '../../src/kv/kv-store.js';
import { EtcdError, KvStoreError } from '../../src/kv/errors.js';
import { prefixEnd } from '../../src/kv/key-range.js';
import type { KvEvent } from '../../src/kv/types.js';
import { dec, enc, tempDir, withStore } from './helpers.js';

async function etcdErr(p: Promise<unknown> | (() => unknown)): Promise<{ code: string; message: string; grpc: number }> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    if (e instanceof EtcdError) return { code: e.code, message: e.message, grpc: e.grpcCode };
    throw e;
  }
  throw new Error('expected an etcd error');
}

async function fill(s: KvStore, pairs: [string, string][]): Promise<void> {
  for (const [k, v] of pairs) await s.put({ key: enc(k), value: enc(v) });
}

describe('revisions', () => {
  it('starts at 1; each changing write bumps once; no-op writes do not', () =>
    withStore(async (s) => {
      expect((await s.range({ key: enc('a') })).header.revision).toBe(1);
      expect((await s.put({ key: enc('a'), value: enc('1') })).header.revision).toBe(2);
      expect((await s.deleteRange({ key: enc('zz') })).header.revision).toBe(2);
      const ro = await s.txn({ success: [{ requestRange: { key: enc('a') } }] });
      expect(ro.header.revision).toBe(2);
      const t = await s.txn({ success: [{ requestPut: { key: enc('b'), value: enc('1') } }, { requestPut: { key: enc('c'), value: enc('1') } }] });
      expect(t.header.revision).toBe(3);
      const kvs = (await s.range({ key: enc('a'), rangeEnd: enc('z') })).kvs;
      expect(kvs.map((kv) => [dec(kv.key), kv.modRevision])).toEqual([['a', 2], ['b', 3], ['c', 3]]);
    }));

  it('tracks create_revision, mod_revision and version; a delete resets them', () =>
    withStore(async (s) => {
      await s.put({ key: enc('k'), value: enc('1') });
      await s.put({ key: enc('k'), value: enc('2') });
      let kv = (await s.range({ key: enc('k') })).kvs[0];
      expect([kv?.createRevision, kv?.modRevision, kv?.version]).toEqual([2, 3, 2]);
      await s.deleteRange({ key: enc('k') });
      await s.put({ key: enc('k'), value: enc('3') });
      kv = (await s.range({ key: enc('k') })).kvs[0];
      expect([kv?.createRevision, kv?.modRevision, kv?.version]).toEqual([5, 5, 1]);
    }));

  it('emits a DELETE event whose kv carries only key and mod_revision, and prev kv', () =>
    withStore(async (s) => {
      const evs: KvEvent[] = [];
      s.onCommit((_r, e) => evs.push(...e));
      await s.put({ key: enc('k'), value: enc('v') });
      await s.deleteRange({ key: enc('k') });
      const d = evs[1];
      expect(d?.type).toBe('DELETE');
      expect([dec(d?.kv.key), d?.kv.modRevision, d?.kv.createRevision, d?.kv.version, dec(d?.kv.value)]).toEqual(['k', 3, 0, 0, '']);
      expect(dec(d?.prevKv?.value)).toBe('v');
    }));

  it('leaves prev kv out of events while no listener wants it, and puts it back when one does', () =>
    withStore(async (s) => {
      const evs: KvEvent[] = [];
      let want = false;
      s.onCommit(
        (_r, e) => evs.push(...e),
        () => want,
      );
      await s.put({ key: enc('k'), value: enc('1') });
      await s.put({ key: enc('k'), value: enc('2') });
      await s.deleteRange({ key: enc('k') });
      expect(evs.map((e) => e.prevKv)).toEqual([undefined, undefined, undefined]);
      want = true;
      await s.put({ key: enc('k'), value: enc('3') });
      await s.put({ key: enc('k'), value: enc('4') });
      await s.deleteRange({ key: enc('k') });
      expect(evs.slice(3).map((e) => (e.prevKv ? dec(e.prevKv.value) : undefined))).toEqual([undefined, '3', '4']);
    }));
});

describe('range', () => {
  const data: [string, string][] = [['a', '5'], ['b', '4'], ['c', '3'], ['d', '2'], ['e', '1']];

  it('follows the range_end conventions', () =>
    withStore(async (s) => {
      await fill(s, [...data, ['b\xff', 'x'], ['c\x00', 'y']]);
      const keys = async (k: string, end?: Uint8Array): Promise<string[]> => (await s.range({ key: enc(k), ...(end ? { rangeEnd: end } : {}) })).kvs.map((kv) => dec(kv.key));
      expect(await keys('b')).toEqual(['b']);
      expect(await keys('b', enc('d'))).toEqual(['b', 'b\xff', 'c', 'c\x00']);
      expect(await keys('c', new Uint8Array([0]))).toEqual(['c', 'c\x00', 'd', 'e']);
      expect(await keys('\x00', new Uint8Array([0]))).toHaveLength(7);
      expect(await keys('b', prefixEnd(enc('b')))).toEqual(['b', 'b\xff']);
      expect(dec(prefixEnd(enc('a\xff')))).toBe('b');
    }));

  it('counts before limit, sets more, and fetches at old revisions', () =>
    withStore(async (s) => {
      await fill(s, data);
      const r = await s.range({ key: enc('a'), rangeEnd: enc('z'), limit: 2 });
      expect([r.kvs.length, r.more, r.count]).toEqual([2, true, 5]);
      const all = await s.range({ key: enc('a'), rangeEnd: enc('z'), limit: 5 });
      expect(all.more).toBe(false);
      const old = await s.range({ key: enc('a'), rangeEnd: enc('z'), revision: 3 });
      expect(old.kvs.map((kv) => dec(kv.key))).toEqual(['a', 'b']);
      expect(old.header.revision).toBe(6);
    }));

  it('sorts by every target; a non-key target with NONE sorts ascending', () =>
    withStore(async (s) => {
      await fill(s, data);
      await s.put({ key: enc('a'), value: enc('6') });
      const by = async (sortTarget: 'KEY' | 'VERSION' | 'CREATE' | 'MOD' | 'VALUE', sortOrder: 'NONE' | 'ASCEND' | 'DESCEND'): Promise<string> =>
        (await s.range({ key: enc('a'), rangeEnd: enc('z'), sortTarget, sortOrder })).kvs.map((kv) => dec(kv.key)).join('');
      expect(await by('KEY', 'DESCEND')).toBe('edcba');
      expect(await by('VALUE', 'NONE')).toBe('edcba');
      expect(await by('VALUE', 'DESCEND')).toBe('abcde');
      expect(await by('MOD', 'DESCEND')).toBe('aedcb');
      expect(await by('CREATE', 'ASCEND')).toBe('abcde');
      expect((await by('VERSION', 'DESCEND'))[0]).toBe('a');
      const lim = await s.range({ key: enc('a'), rangeEnd: enc('z'), sortTarget: 'VALUE', sortOrder: 'ASCEND', limit: 2 });
      expect([lim.kvs.map((kv) => dec(kv.key)).join(''), lim.more, lim.count]).toEqual(['ed', true, 5]);
    }));

  it('keys_only, count_only and min/max revision filters (count is before pruning)', () =>
    withStore(async (s) => {
      await fill(s, data);
      const ko = await s.range({ key: enc('a'), rangeEnd: enc('z'), keysOnly: true });
      expect(ko.kvs.every((kv) => kv.value.length === 0)).toBe(true);
      const co = await s.range({ key: enc('a'), rangeEnd: enc('z'), countOnly: true });
      expect([co.kvs.length, co.count]).toEqual([0, 5]);
      const f = await s.range({ key: enc('a'), rangeEnd: enc('z'), minModRevision: 3, maxModRevision: 5 });
      expect([f.kvs.map((kv) => dec(kv.key)).join(''), f.count]).toEqual(['bcd', 5]);
      const c = await s.range({ key: enc('a'), rangeEnd: enc('z'), minCreateRevision: 4, maxCreateRevision: 4 });
      expect(c.kvs.map((kv) => dec(kv.key))).toEqual(['c']);
    }));

  it('refuses compacted and future revisions, and empty keys', () =>
    withStore(async (s) => {
      await fill(s, data);
      await s.compact(4).done;
      expect(await etcdErr(s.range({ key: enc('a'), revision: 3 }))).toEqual({ code: 'COMPACTED', message: 'etcdserver: mvcc: required revision has been compacted', grpc: 11 });
      expect((await s.range({ key: enc('a'), revision: 4 })).kvs).toHaveLength(1);
      expect(await etcdErr(s.range({ key: enc('a'), revision: 7 }))).toEqual({ code: 'FUTURE_REV', message: 'etcdserver: mvcc: required revision is a future revision', grpc: 11 });
      expect((await etcdErr(s.range({ key: new Uint8Array() }))).message).toBe('etcdserver: key is not provided');
    }));
});

describe('put', () => {
  it('returns prev_kv, keeps value or lease with ignore_*, and refuses bad combinations', () =>
    withStore(async (s) => {
      s.leaseGrant('7', 60);
      await s.put({ key: enc('k'), value: enc('v1'), lease: '7' });
      const r = await s.put({ key: enc('k'), value: enc('v2'), prevKv: true, ignoreLease: true });
      expect(dec(r.prevKv?.value)).toBe('v1');
      let kv = (await s.range({ key: enc('k') })).kvs[0];
      expect([dec(kv?.value), kv?.lease]).toEqual(['v2', '7']);
      await s.put({ key: enc('k'), ignoreValue: true, lease: '0' });
      kv = (await s.range({ key: enc('k') })).kvs[0];
      expect([dec(kv?.value), kv?.lease, kv?.version]).toEqual(['v2', '0', 3]);
      expect((await etcdErr(s.put({ key: enc('k'), value: enc('x'), ignoreValue: true }))).message).toBe('etcdserver: value is provided');
      expect((await etcdErr(s.put({ key: enc('k'), lease: '7', ignoreLease: true }))).message).toBe('etcdserver: lease is provided');
      expect((await etcdErr(s.put({ key: enc('missing'), ignoreValue: true }))).message).toBe('etcdserver: key not found');
      expect(await etcdErr(s.put({ key: enc('k'), value: enc('x'), lease: '99' }))).toEqual({ code: 'LEASE_NOT_FOUND', message: 'etcdserver: requested lease not found', grpc: 5 });
      expect((await etcdErr(s.put({ key: new Uint8Array(), value: enc('x') }))).message).toBe('etcdserver: key is not provided');
      expect(s.currentRev).toBe(4);
    }));
});

describe('txn', () => {
  it('compares on every target; a missing key fails VALUE but compares other targets with 0', () =>
    withStore(async (s) => {
      s.leaseGrant('5', 60);
      await s.put({ key: enc('k'), value: enc('b'), lease: '5' });
      const t = async (c: Parameters<KvStore['txn']>[0]['compare']): Promise<boolean> => (await s.txn({ compare: c ?? [] })).succeeded;
      expect(await t([{ key: enc('k'), target: 'VALUE', result: 'GREATER', value: enc('a') }])).toBe(true);
      expect(await t([{ key: enc('k'), target: 'VALUE', result: 'LESS', value: enc('c') }])).toBe(true);
      expect(await t([{ key: enc('k'), target: 'VERSION', result: 'EQUAL', version: 1 }])).toBe(true);
      expect(await t([{ key: enc('k'), target: 'CREATE', result: 'EQUAL', createRevision: 2 }])).toBe(true);
      expect(await t([{ key: enc('k'), target: 'MOD', result: 'NOT_EQUAL', modRevision: 1 }])).toBe(true);
      expect(await t([{ key: enc('k'), target: 'LEASE', result: 'EQUAL', lease: '5' }])).toBe(true);
      expect(await t([{ key: enc('nope'), target: 'VALUE', result: 'NOT_EQUAL', value: enc('x') }])).toBe(false);
      expect(await t([{ key: enc('nope'), target: 'VERSION', result: 'EQUAL', version: 0 }])).toBe(true);
      expect(await t([{ key: enc('nope'), target: 'CREATE', result: 'LESS', createRevision: 1 }])).toBe(true);
      expect(await t([{ key: enc('nope'), target: 'MOD', result: 'GREATER', modRevision: 0 }])).toBe(false);
    }));

  it('compares every key of a range_end', () =>
    withStore(async (s) => {
      await fill(s, [['a', '1'], ['b', '1'], ['c', '2']]);
      const all = (end: string, v: string): Promise<boolean> => s.txn({ compare: [{ key: enc('a'), rangeEnd: enc(end), target: 'VALUE', result: 'EQUAL', value: enc(v) }] }).then((r) => r.succeeded);
      expect(await all('c', '1')).toBe(true);
      expect(await all('d', '1')).toBe(false);
    }));

  it('nested txns decide their branches against the state before the outer txn', () =>
    withStore(async (s) => {
      const r = await s.txn({
        success: [
          { requestPut: { key: enc('x'), value: enc('1') } },
          { requestTxn: { compare: [{ key: enc('x'), target: 'VERSION', result: 'EQUAL', version: 0 }], success: [{ requestPut: { key: enc('y'), value: enc('then') } }], failure: [{ requestPut: { key: enc('y'), value: enc('else') } }] } },
          { requestRange: { key: enc('x'), rangeEnd: enc('z') } },
        ],
      });
      const nested = r.responses[1];
      expect(nested && 'responseTxn' in nested && nested.responseTxn.succeeded).toBe(true);
      const range = r.responses[2];
      expect(range && 'responseRange' in range && range.responseRange.kvs.map((kv) => dec(kv.value))).toEqual(['1', 'then']);
      expect(r.header.revision).toBe(2);
    }));

  it('reads history from disk inside a write txn, and its own writes at the head', () =>
    withStore(async (s) => {
      for (let i = 0; i < 5; i++) await s.put({ key: enc('h'), value: enc(String(i)) });
      await s.flush();
      const r = await s.txn({
        success: [
          { requestRange: { key: enc('h'), revision: 3 } },
          { requestPut: { key: enc('h'), value: enc('new') } },
          { requestRange: { key: enc('h') } },
        ],
      });
      const vals = r.responses.map((op) => ('responseRange' in op ? op.responseRange.kvs.map((kv) => dec(kv.value)).join() : 'put'));
      expect(vals).toEqual(['1', 'put', 'new']);
      expect(r.header.revision).toBe(7);
      // As in etcd, revisions are checked against the view before the txn: its own revision is future.
      expect((await etcdErr(s.txn({ success: [{ requestPut: { key: enc('h'), value: enc('x') } }, { requestRange: { key: enc('h'), revision: 8 } }] }))).code).toBe('FUTURE_REV');
    }));

  it('refuses too many ops and duplicate keys, changing nothing', () =>
    withStore(async (s) => {
      const many = Array.from({ length: 129 }, (_, i) => ({ requestPut: { key: enc(`k${i}`), value: enc('v') } }));
      expect(await etcdErr(s.txn({ success: many }))).toEqual({ code: 'TOO_MANY_OPS', message: 'etcdserver: too many operations in txn request', grpc: 3 });
      const dupe = (ops: Parameters<KvStore['txn']>[0]['success']): Promise<{ message: string }> => etcdErr(s.txn({ success: ops ?? [] }));
      expect((await dupe([{ requestPut: { key: enc('a'), value: enc('1') } }, { requestPut: { key: enc('a'), value: enc('2') } }])).message).toBe('etcdserver: duplicate key given in txn request');
      expect((await dupe([{ requestPut: { key: enc('b'), value: enc('1') } }, { requestDeleteRange: { key: enc('a'), rangeEnd: enc('c') } }])).message).toBe('etcdserver: duplicate key given in txn request');
      expect((await dupe([{ requestPut: { key: enc('a'), value: enc('1') } }, { requestTxn: { success: [{ requestPut: { key: enc('a'), value: enc('2') } }] } }])).message).toBe('etcdserver: duplicate key given in txn request');
      // The two branches of a nested txn exclude each other, so each may put the same key.
      await s.txn({ success: [{ requestTxn: { success: [{ requestPut: { key: enc('a'), value: enc('1') } }], failure: [{ requestPut: { key: enc('a'), value: enc('2') } }] } }] });
      // A failing precondition (unknown lease) fails the whole txn before any write.
      expect((await etcdErr(s.txn({ success: [{ requestPut: { key: enc('p'), value: enc('1') } }, { requestPut: { key: enc('q'), value: enc('1'), lease: '42' } }] }))).message).toBe('etcdserver: requested lease not found');
      expect((await s.range({ key: enc('p') })).count).toBe(0);
      expect(s.currentRev).toBe(2);
    }));

  it('applies a txn from the Raft log without checking its op count again: the proposer checked it with its own limit', () =>
    withStore(
      async (s) => {
        const three = Array.from({ length: 3 }, (_, i) => ({ requestPut: { key: enc(`k${i}`), value: enc('v') } }));
        expect((await etcdErr(s.txn({ success: three }))).code).toBe('TOO_MANY_OPS');
        // With a consistent index, the txn is an entry a member with a larger --max-txn-ops proposed.
        const r = await s.txn({ success: three }, 10);
        expect(r.responses).toHaveLength(3);
        expect(s.consistentIndex).toBe(10);
        // What depends on the store's state is still checked on every member.
        expect((await etcdErr(s.txn({ success: [{ requestPut: { key: enc('x'), value: enc('1'), lease: '42' } }] }, 11))).code).toBe('LEASE_NOT_FOUND');
      },
      { maxTxnOps: 2 },
    ));
});

describe('compaction', () => {
  it('refuses compacted and future revisions and physically removes superseded records', () =>
    withStore(async (s) => {
      for (let i = 0; i < 10; i++) await s.put({ key: enc('k'), value: enc(String(i)) });
      await s.put({ key: enc('gone'), value: enc('x') });
      await s.deleteRange({ key: enc('gone') });
      const before = s.size();
      await s.compact(11).done;
      expect(s.size()).toBeLessThan(before);
      expect((await etcdErr(() => s.compact(11))).code).toBe('COMPACTED');
      expect((await etcdErr(() => s.compact(99))).code).toBe('FUTURE_REV');
      const hist: number[] = [];
      for await (const { rev } of s.history(1, 13)) hist.push(rev);
      // Only the value visible at 11 (k@11) and the later changes remain.
      expect(hist).toEqual([11, 12, 13]);
      expect(dec((await s.range({ key: enc('k'), revision: 11 })).kvs[0]?.value)).toBe('9');
    }));

  it('compacts a key space larger than one chunk while writes go on, ending where a quiet compaction ends', async () => {
    // 5,000 keys (compaction works 2,000 per turn of the event loop) with history to drop, 1,000 of them
    // deleted. Store A compacts while a writer changes keys in chunks already done and still to come,
    // recreates a key the compaction drops, and deletes another; store B does the same writes after its
    // compaction has finished. Both must end with the same contents, history and hash.
    const key = (i: number): Uint8Array => enc(`k${String(i).padStart(4, '0')}`);
    const prepare = async (s: KvStore): Promise<number> => {
      for (let round = 0; round < 2; round++) {
        const ops = Array.from({ length: 5000 }, (_, i) => ({ requestPut: { key: key(i), value: enc(`v${round}.${i}`) } }));
        for (let at = 0; at < ops.length; at += 100) await s.txn({ success: ops.slice(at, at + 100) });
      }
      await s.deleteRange({ key: key(0), rangeEnd: key(1000) });
      return s.currentRev;
    };
    const writes = [
      () => ({ key: key(4999), value: enc('late') }),
      () => ({ key: key(500), value: enc('recreated') }),
      () => ({ key: key(2500), value: enc('changed') }),
      () => ({ key: key(10), value: enc('recreated too') }),
    ];
    const [a, b] = [await tempDir(), await tempDir()];
    const sa = await KvStore.open(a);
    const sb = await KvStore.open(b);
    try {
      const rev = await prepare(sa);
      expect(await prepare(sb)).toBe(rev);
      const compaction = sa.compact(rev).done;
      let interleaved = 0;
      let finished = false;
      void compaction.then(() => (finished = true));
      for (const w of writes) {
        await new Promise((r) => setImmediate(r));
        if (!finished) interleaved++;
        await sa.put(w());
      }
      await sa.deleteRange({ key: key(3000) });
      await compaction;
      expect(interleaved).toBeGreaterThan(1); // the writes did land between chunks
      await sb.compact(rev).done;
      for (const w of writes) await sb.put(w());
      await sb.deleteRange({ key: key(3000) });

      const all = async (s: KvStore, revision = 0): Promise<string[]> =>
        (await s.range({ key: enc('k'), rangeEnd: enc('l'), revision })).kvs.map((kv) => `${dec(kv.key)}=${dec(kv.value)}@${kv.modRevision}/${kv.createRevision}/${kv.version}`);
      expect(await all(sa)).toEqual(await all(sb));
      expect(await all(sa, rev)).toEqual(await all(sb, rev));
      expect((await all(sa)).length).toBe(4000 + 2 - 1);
      expect(await sa.hashKV()).toEqual(await sb.hashKV());
      const history = async (s: KvStore): Promise<string[]> => {
        const out: string[] = [];
        for await (const { rev: r, event } of s.history(1, s.currentRev)) out.push(`${r}:${event.type}:${dec(event.kv.key)}`);
        return out;
      };
      expect(await history(sa)).toEqual(await history(sb));
      await sa.flush();
      await sb.flush();
      expect(sa.size()).toBe(sb.size());
    } finally {
      await sa.close();
      await sb.close();
      await rm(a, { recursive: true, force: true });
      await rm(b, { recursive: true, force: true });
    }
  }, 60_000);

  it('counts the bytes it frees as a reopen counts what is left, without reading the records back', async () => {
    // Overwrites, deletes, a key recreated after its delete, leases (one revoked), a txn, a ranged delete. Compacted at
    // each revision — on the store that made the writes, on one reopened first, and step by step — the
    // bytes in use must be what opening the store again finds on disk.
    const write = async (s: KvStore): Promise<number> => {
      s.leaseGrant('7', 600);
      s.leaseGrant('8', 30);
      await s.put({ key: enc('a'), value: enc('1') });
      await s.put({ key: enc('a'), value: enc('22'), lease: '7' });
      await s.put({ key: enc('b'), value: enc('333') });
      await s.deleteRange({ key: enc('a') });
      await s.put({ key: enc('a'), value: enc('4444') });
      await s.txn({ success: [{ requestPut: { key: enc('c'), value: enc('5') } }, { requestPut: { key: enc('b'), value: enc('66'), lease: '7' } }] });
      await s.put({ key: enc('b'), ignoreValue: true, lease: '0' });
      await s.deleteRange({ key: enc('a'), rangeEnd: enc('c') });
      s.leaseRevoke('7');
      await s.put({ key: enc('b'), value: enc('7777777') });
      await s.deleteRange({ key: enc('c') });
      return s.currentRev;
    };
    const reopened = async (dir: string, s: KvStore): Promise<KvStore> => {
      const counted = s.size();
      await s.close();
      const again = await KvStore.open(dir);
      expect(again.size()).toBe(counted);
      return again;
    };
    const dirs: string[] = [];
    const fresh = async (): Promise<[string, KvStore]> => {
      const dir = await tempDir();
      dirs.push(dir);
      return [dir, await KvStore.open(dir)];
    };
    try {
      const [stepDir, first] = await fresh();
      let stepwise = first;
      const head = await write(stepwise);
      for (let rev = 2; rev <= head; rev++) {
        for (const reopenFirst of [false, true]) {
          const [dir, made] = await fresh();
          await write(made);
          const s = reopenFirst ? await reopened(dir, made) : made;
          await s.compact(rev).done;
          await (await reopened(dir, s)).close();
        }
        await stepwise.compact(rev).done;
      }
      stepwise = await reopened(stepDir, stepwise);
      const left: string[] = [];
      for await (const { rev, event } of stepwise.history(1, head)) left.push(`${rev}:${event.type}:${dec(event.kv.key)}`);
      // At the head, as in etcd: the live value stays and a tombstone at the compacted revision goes.
      expect(left).toEqual([`${head - 1}:PUT:b`]);
      await stepwise.close();
    } finally {
      for (const d of dirs) await rm(d, { recursive: true, force: true });
    }
  });

  it('survives a restart and keeps the compacted revision', async () => {
    const dir = await tempDir();
    try {
      let s = await KvStore.open(dir);
      for (let i = 0; i < 5; i++) await s.put({ key: enc(`k${i % 2}`), value: enc(String(i)) });
      await s.compact(5).done;
      const h1 = await s.hashKV();
      await s.close();
      s = await KvStore.open(dir);
      expect([s.currentRev, s.compactRev]).toEqual([6, 5]);
      expect(await s.hashKV()).toEqual(h1);
      expect((await etcdErr(s.range({ key: enc('k0'), revision: 4 }))).code).toBe('COMPACTED');
      await s.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('hash, snapshot and restore', () => {
  it('hashes equal histories equally, whatever the physical compaction progress', async () => {
    const a = await tempDir();
    const b = await tempDir();
    try {
      const s1 = await KvStore.open(a);
      const s2 = await KvStore.open(b);
      for (const s of [s1, s2]) for (let i = 0; i < 20; i++) await s.put({ key: enc(`k${i % 3}`), value: enc(String(i)) });
      await s1.compact(10).done;
      const c = s2.compact(10);
      expect((await s1.hashKV()).hash).toBe((await s2.hashKV()).hash);
      await c.done;
      expect((await s1.hashKV(15)).hash).toBe((await s2.hashKV(15)).hash);
      await s2.put({ key: enc('extra'), value: enc('1') });
      expect((await s1.hashKV()).hash).not.toBe((await s2.hashKV()).hash);
      await s1.close();
      await s2.close();
    } finally {
      await rm(a, { recursive: true, force: true });
      await rm(b, { recursive: true, force: true });
    }
  });

  it('streams a snapshot that restores to an identical store', async () => {
    const a = await tempDir();
    const b = await tempDir();
    try {
      const s1 = await KvStore.open(a);
      s1.leaseGrant('9', 100);
      for (let i = 0; i < 300; i++) await s1.put({ key: enc(`key/${i % 50}`), value: enc('v'.repeat(i)), ...(i % 7 === 0 ? { lease: '9' } : {}) });
      await s1.compact(100).done;
      s1.markApplied(1234);
      const s2 = await KvStore.restore(b, s1.snapshot(4096));
      expect([s2.currentRev, s2.compactRev, s2.consistentIndex]).toEqual([s1.currentRev, s1.compactRev, 1234]);
      expect(await s2.hashKV()).toEqual(await s1.hashKV());
      expect(s2.leaseTimeToLive('9', true).keys).toEqual(s1.leaseTimeToLive('9', true).keys);
      await s1.close();
      await s2.close();
    } finally {
      await rm(a, { recursive: true, force: true });
      await rm(b, { recursive: true, force: true });
    }
  });
});

describe('quota', () => {
  it('refuses writes past the quota with NOSPACE while reads and deletes still work', () =>
    withStore(
      async (s) => {
        let err: { message: string; grpc: number } | undefined;
        for (let i = 0; i < 100 && !err; i++) {
          try {
            await s.put({ key: enc(`k${i}`), value: enc('x'.repeat(1000)) });
          } catch (e) {
            if (!(e instanceof EtcdError)) throw e;
            err = { message: e.message, grpc: e.grpcCode };
          }
        }
        expect(err).toEqual({ message: 'etcdserver: mvcc: database space exceeded', grpc: 8 });
        expect((await s.range({ key: enc('k0') })).count).toBe(1);
        expect((await s.deleteRange({ key: enc('k0') })).deleted).toBe(1);
        expect((await etcdErr(s.put({ key: enc('small'), value: enc('1') }))).code).toBe('NO_SPACE');
        s.disarmNoSpace();
        await s.put({ key: enc('small'), value: enc('1') });
      },
      { quotaBackendBytes: 20_000 },
    ));
});

describe('leases', () => {
  it('grants with a TTL floor, refuses duplicates and huge TTLs, revokes keys in one revision', () => {
    let now = 1_000_000;
    return withStore(
      async (s) => {
        expect(s.leaseGrant('1', 1).ttl).toBe(5);
        expect((await etcdErr(() => s.leaseGrant('1', 10))).message).toBe('etcdserver: lease already exists');
        expect((await etcdErr(() => s.leaseGrant('2', 9_000_000_001))).message).toBe('etcdserver: too large lease TTL');
        await s.put({ key: enc('a'), value: enc('1'), lease: '1' });
        await s.put({ key: enc('b'), value: enc('1'), lease: '1' });
        await s.put({ key: enc('c'), value: enc('1') });
        expect(s.leaseTimeToLive('1', true)).toEqual({ id: '1', ttl: 5, grantedTtl: 5, keys: ['a', 'b'] });
        expect(s.leaseTimeToLive('77', false).ttl).toBe(-1);
        // Only the primary runs clocks; promotion extends every lease by the election timeout.
        expect(s.expiredLeases()).toEqual([]);
        s.leasePromote(1000);
        now += 5500;
        expect(s.expiredLeases()).toEqual([]);
        now += 600;
        expect(s.expiredLeases()).toEqual(['1']);
        expect(s.leaseRenew('1')).toBe(5);
        expect(s.expiredLeases()).toEqual([]);
        expect(s.leaseRenew('404')).toBe(0);
        const rev = s.leaseRevoke('1');
        expect(rev).toBe(5);
        expect((await s.range({ key: enc('a'), rangeEnd: enc('z') })).kvs.map((kv) => dec(kv.key))).toEqual(['c']);
        expect((await etcdErr(() => s.leaseRevoke('1'))).message).toBe('etcdserver: requested lease not found');
      },
      { minLeaseTtl: 5, now: () => now },
    );
  });

  it('survives a restart with keys still attached', async () => {
    const dir = await tempDir();
    try {
      let s = await KvStore.open(dir);
      s.leaseGrant('3', 30);
      await s.put({ key: enc('x'), value: enc('1'), lease: '3' });
      await s.close();
      s = await KvStore.open(dir);
      expect(s.leaseTimeToLive('3', true)).toMatchObject({ grantedTtl: 30, keys: ['x'] });
      s.leaseRevoke('3');
      expect((await s.range({ key: enc('x') })).count).toBe(0);
      await s.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('data directory', () => {
  it('refuses a foreign directory and a file in place of one, with clear errors', async () => {
    const dir = await tempDir();
    try {
      await writeFile(join(dir, 'notes.txt'), 'hello');
      await expect(KvStore.open(dir)).rejects.toThrow(KvStoreError);
      await expect(KvStore.open(dir)).rejects.toThrow(/not a Setpoint key-value data directory/);
      await expect(KvStore.open(join(dir, 'notes.txt'))).rejects.toThrow(/is not a directory/);
      const garbage = join(dir, 'db');
      await mkdir(garbage);
      await writeFile(join(garbage, 'CURRENT'), 'MANIFEST-999999\n');
      await expect(KvStore.open(garbage)).rejects.toThrow(/cannot open key-value data/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
