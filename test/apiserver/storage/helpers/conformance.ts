// What every Storage must do, whichever implementation stands behind it (the etcd store, the watch cache)
// and whichever store stands behind that (etcd 3.4, Setpoint): the registry cannot tell them apart. Each
// test works under a prefix of its own; the raw client looks at what was really written.
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { EtcdClient } from '../../../../src/etcd-client/etcd-client.js';
import { NO_CHANGE } from '../../../../src/apiserver/storage/interface.js';
import type { Guard, Storage, StoredObject } from '../../../../src/apiserver/storage/interface.js';
import { WatchReader, labelled, pod, storageError, waitFor, withLabels } from './objects.js';

export interface ConformanceTarget {
  /** A Storage serving (at least) the keys under `prefix`, which ends in '/'. */
  storage(prefix: string): Promise<Storage>;
  readonly client: EtcdClient;
}

const annotated = (o: StoredObject, n: number): StoredObject => ({ ...o, metadata: { ...o.metadata, annotations: { counter: String(n) } } });
const counterOf = (o: StoredObject | undefined): number => Number((o?.metadata['annotations'] as Record<string, string> | undefined)?.['counter'] ?? 0);

export function storageConformance(target: () => ConformanceTarget): void {
  const fresh = async (): Promise<{ s: Storage; prefix: string; key: (n: string) => string }> => {
    const prefix = `/registry/pods-${randomUUID().slice(0, 8)}/`;
    return { s: await target().storage(prefix), prefix, key: (n) => `${prefix}default/${n}` };
  };

  it('creates and gets; resourceVersion is the mod_revision and is not stored', async () => {
    const { s, key } = await fresh();
    const created = await s.create(key('a'), pod('a'));
    const raw = await target().client.get(key('a'));
    expect(created.metadata.resourceVersion).toBe(String(raw?.modRevision));
    expect(JSON.parse(raw?.value.toString() ?? '{}').metadata.resourceVersion).toBeUndefined();
    expect(await s.get(key('a'))).toEqual(created);
    // Not older than the create: a cache waits until it has it.
    expect(await s.get(key('a'), { resourceVersion: created.metadata.resourceVersion as string })).toEqual(created);
    expect((await storageError(s.create(key('a'), pod('a')))).code).toBe('AlreadyExists');
    expect((await storageError(s.get(key('missing')))).code).toBe('NotFound');
    await expect(s.create(key('b'), { ...pod('b'), metadata: { ...pod('b').metadata, resourceVersion: '5' } })).rejects.toThrow('resourceVersion should not be set on objects to be created');
    const big = Number(created.metadata.resourceVersion) + 1000;
    const tooLarge = await storageError(s.get(key('a'), { resourceVersion: String(big) }));
    expect(tooLarge.code).toBe('TooLargeResourceVersion');
    expect(tooLarge.message).toMatch(new RegExp(`^Too large resource version: ${big}, current: \\d+$`));
    expect((await storageError(s.get(key('a'), { resourceVersion: 'x1' }))).code).toBe('BadRequest');
  });

  it('updates through guaranteedUpdate; a no-op keeps the resourceVersion', async () => {
    const { s, key } = await fresh();
    const created = await s.create(key('a'), pod('a'));
    const up = await s.guaranteedUpdate(key('a'), {}, async (cur) => annotated(cur as StoredObject, 1));
    expect(up.created).toBe(false);
    expect(Number(up.object.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    expect(counterOf(up.object)).toBe(1);
    const same = await s.guaranteedUpdate(key('a'), {}, async (cur) => ({ ...(cur as StoredObject) }));
    expect(same.object.metadata.resourceVersion).toBe(up.object.metadata.resourceVersion);
    const none = await s.guaranteedUpdate(key('a'), {}, async () => NO_CHANGE);
    expect(none.object).toEqual(up.object);
    expect((await storageError(s.guaranteedUpdate(key('nope'), {}, async (c) => c as StoredObject))).code).toBe('NotFound');
    const made = await s.guaranteedUpdate(key('new'), { allowCreate: true }, async (cur) => cur ?? pod('new'));
    expect(made.created).toBe(true);
    await expect(s.guaranteedUpdate(key('a'), {}, async () => Promise.reject(new Error('refused by tryUpdate')))).rejects.toThrow('refused by tryUpdate');
  });

  it("refuses a write whose preconditions do not hold, with Kubernetes' messages", async () => {
    const { s, key } = await fresh();
    const a = await s.create(key('a'), pod('a'));
    const uid = await storageError(s.guaranteedUpdate(key('a'), { preconditions: { uid: 'other' } }, async (c) => annotated(c as StoredObject, 1)));
    expect([uid.code, uid.message]).toEqual(['Conflict', `StorageError: invalid object, Code: 4, Key: ${key('a')}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object meta: ${a.metadata.uid}`]);
    const rv = await storageError(s.delete(key('a'), { preconditions: { resourceVersion: '1' } }));
    expect([rv.code, rv.message]).toEqual(['Conflict', `StorageError: invalid object, Code: 4, Key: ${key('a')}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${a.metadata.resourceVersion}`]);
    const ok = await s.guaranteedUpdate(key('a'), { preconditions: { uid: a.metadata.uid as string, resourceVersion: a.metadata.resourceVersion as string } }, async (c) => annotated(c as StoredObject, 1));
    expect(counterOf(ok.object)).toBe(1);
  });

  it('deletes, returning the object with the revision of its deletion; validate sees the current object', async () => {
    const { s, key } = await fresh();
    const a = await s.create(key('a'), pod('a'));
    await expect(s.delete(key('a'), { validate: () => Promise.reject(new Error('not yet')) })).rejects.toThrow('not yet');
    let validated: StoredObject | undefined;
    const gone = await s.delete(key('a'), { preconditions: { uid: a.metadata.uid as string }, validate: (cur) => void (validated = cur) });
    expect(validated?.metadata.resourceVersion).toBe(a.metadata.resourceVersion);
    expect(gone.metadata.name).toBe('a');
    expect(Number(gone.metadata.resourceVersion)).toBeGreaterThan(Number(a.metadata.resourceVersion));
    expect(await target().client.get(key('a'))).toBeUndefined();
    expect((await storageError(s.delete(key('a')))).code).toBe('NotFound');
  });

  it('runs every check on a dry run and stores nothing', async () => {
    const { s, key } = await fresh();
    const dry = await s.create(key('a'), pod('a'), { dryRun: true });
    expect(dry.metadata.resourceVersion).toBeUndefined();
    expect(await target().client.get(key('a'))).toBeUndefined();
    const a = await s.create(key('a'), pod('a'));
    expect((await storageError(s.create(key('a'), pod('a'), { dryRun: true }))).code).toBe('AlreadyExists');
    const up = await s.guaranteedUpdate(key('a'), { dryRun: true }, async (c) => annotated(c as StoredObject, 7));
    expect(counterOf(up.object)).toBe(7);
    await s.delete(key('a'), { dryRun: true });
    expect((await s.get(key('a'))).metadata.resourceVersion).toBe(a.metadata.resourceVersion);
    expect(counterOf(await s.get(key('a')))).toBe(0);
  });

  it('writes companions in the same Txn as the object, and nothing when a guard moved', async () => {
    const { s, key, prefix } = await fresh();
    const c = target().client;
    const history = `${prefix}history/a`;
    const a = await s.create(key('a'), pod('a'), { companions: [{ key: history, value: Buffer.from('created') }] });
    expect((await c.get(history))?.modRevision).toBe(Number(a.metadata.resourceVersion));
    const lease = (await c.put(`${prefix}lease/holder`, 'me')).revision;
    const up = await s.guaranteedUpdate(key('a'), { guards: [{ key: `${prefix}lease/holder`, modRevision: lease }], companions: [{ key: history, value: Buffer.from('updated') }] }, async (cur) => annotated(cur as StoredObject, 1));
    expect((await c.get(history))?.modRevision).toBe(Number(up.object.metadata.resourceVersion));
    await c.put(`${prefix}lease/holder`, 'someone else');
    const fenced = await storageError(s.guaranteedUpdate(key('a'), { guards: [{ key: `${prefix}lease/holder`, modRevision: lease }], companions: [{ key: history, value: Buffer.from('fenced') }] }, async (cur) => annotated(cur as StoredObject, 2)));
    expect([fenced.code, fenced.detail?.guard?.modRevision]).toEqual(['GuardFailed', lease]);
    expect(counterOf(await s.get(key('a')))).toBe(1);
    expect((await c.get(history))?.value.toString()).toBe('updated');
    expect((await storageError(s.create(key('b'), pod('b'), { guards: [{ key: `${prefix}lease/holder`, modRevision: lease }] }))).code).toBe('GuardFailed');
    expect(await c.get(key('b'))).toBeUndefined();
    const deleted = await s.delete(key('a'), { companions: [{ key: history, value: null }] });
    expect(deleted.metadata.name).toBe('a');
    expect(await c.get(history)).toBeUndefined();
  });

  it('checks a refreshable guard again when its key moved: the write lands, or fails with what the check says', async () => {
    const { s, key, prefix } = await fresh();
    const c = target().client;
    const guardKey = `${prefix}lease/holder`;
    await s.create(key('a'), pod('a'));
    const first = (await c.put(guardKey, 'me')).revision;
    let checks = 0;
    const check = async (): Promise<Guard> => {
      checks++;
      const kv = await c.get(guardKey);
      if (kv?.value.toString() !== 'me') throw new Error('held by another');
      return { key: guardKey, modRevision: kv.modRevision, refresh: check };
    };
    // A renewal (same holder) between the check and the write.
    await c.put(guardKey, 'me');
    const up = await s.guaranteedUpdate(key('a'), { guards: [{ key: guardKey, modRevision: first, refresh: check }] }, async (cur) => annotated(cur as StoredObject, 1));
    expect([counterOf(up.object), checks]).toEqual([1, 1]);
    await c.put(guardKey, 'someone else');
    await expect(s.guaranteedUpdate(key('a'), { guards: [{ key: guardKey, modRevision: first, refresh: check }] }, async (cur) => annotated(cur as StoredObject, 2))).rejects.toThrow('held by another');
    expect(counterOf(await s.get(key('a')))).toBe(1);
  });

  it('sixteen writers incrementing one counter: the final value is the number of successful updates', async () => {
    const { s, key } = await fresh();
    await s.create(key('counter'), pod('counter'));
    let attempts = 0;
    const each = 15;
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, async () => {
        let ok = 0;
        for (let i = 0; i < each; i++) {
          await s.guaranteedUpdate(key('counter'), {}, async (cur) => {
            attempts++;
            return annotated(cur as StoredObject, counterOf(cur) + 1);
          });
          ok++;
        }
        return ok;
      }),
    );
    const successes = results.reduce((n, r) => n + (r.status === 'fulfilled' ? r.value : 0), 0);
    expect(successes).toBe(16 * each);
    expect(counterOf(await s.get(key('counter')))).toBe(successes);
    // They did collide: more tries than updates, each conflict retried with the object read back.
    expect(attempts).toBeGreaterThan(successes);
  });

  it('stores objects with a TTL under shared leases that expire them', async () => {
    const { s, key } = await fresh();
    const c = target().client;
    // A 60 s TTL is granted 3 s longer (5%) and shared by the writes of those 3 s.
    await s.create(key('long1'), pod('long1'), { ttlSeconds: 60 });
    await s.create(key('long2'), pod('long2'), { ttlSeconds: 60 });
    const [l1, l2] = [(await c.get(key('long1')))?.lease, (await c.get(key('long2')))?.lease];
    expect(l1).not.toBe('0');
    expect(l2).toBe(l1);
    await s.create(key('short'), pod('short'), { ttlSeconds: 2 });
    expect((await c.get(key('short')))?.lease).not.toBe(l1);
    await waitFor('the object to expire', async () => ((await c.get(key('short'))) === undefined ? true : undefined), 30_000);
    expect((await storageError(s.get(key('short')))).code).toBe('NotFound');
    expect((await s.get(key('long1'))).metadata.name).toBe('long1');
  });

  it('lists in key order, with limit, continue and remainingItemCount at one revision', async () => {
    const { s, prefix, key } = await fresh();
    for (let i = 0; i < 25; i++) await s.create(key(`p${String(i).padStart(2, '0')}`), pod(`p${String(i).padStart(2, '0')}`, { parity: i % 2 ? 'odd' : 'even' }));
    const all = await s.list(prefix);
    expect(all.items.map((o) => o.metadata.name)).toEqual(Array.from({ length: 25 }, (_, i) => `p${String(i).padStart(2, '0')}`));
    expect(all.continue).toBeUndefined();
    const p1 = await s.list(prefix, { limit: 10 });
    expect([p1.items.length, p1.remainingItemCount, p1.resourceVersion]).toEqual([10, 15, all.resourceVersion]);
    await s.create(key('p05x'), pod('p05x'));
    const p2 = await s.list(prefix, { limit: 10, continue: p1.continue as string });
    const p3 = await s.list(prefix, { limit: 10, continue: p2.continue as string });
    expect([p2.items.length, p2.remainingItemCount, p3.items.length, p3.continue, p3.remainingItemCount]).toEqual([10, 5, 5, undefined, undefined]);
    // Every page is read at the first page's revision: the object made meanwhile is not in it.
    expect([...p1.items, ...p2.items, ...p3.items].map((o) => o.metadata.name)).toEqual(all.items.map((o) => o.metadata.name));
    expect(p3.resourceVersion).toBe(all.resourceVersion);
    const odd = await s.list(prefix, { limit: 5, predicate: labelled({ parity: 'odd' }) });
    expect(odd.items.map((o) => o.metadata.name)).toEqual(['p01', 'p03', 'p05', 'p07', 'p09']);
    expect([odd.continue !== undefined, odd.remainingItemCount]).toEqual([true, undefined]);
    const rest = await s.list(prefix, { limit: 100, continue: odd.continue as string, predicate: labelled({ parity: 'odd' }) });
    expect(rest.items).toHaveLength(7);
    expect(await s.count(prefix)).toBe(26);
  });

  it('lists at an exact revision, not older than one, and refuses bad arguments', async () => {
    const { s, prefix, key } = await fresh();
    const a = await s.create(key('a'), pod('a'));
    await s.guaranteedUpdate(key('a'), {}, async (c) => annotated(c as StoredObject, 1));
    const exact = await s.list(prefix, { resourceVersion: a.metadata.resourceVersion as string, resourceVersionMatch: 'Exact' });
    expect([exact.resourceVersion, counterOf(exact.items[0])]).toEqual([a.metadata.resourceVersion, 0]);
    const notOlder = await s.list(prefix, { resourceVersion: a.metadata.resourceVersion as string, resourceVersionMatch: 'NotOlderThan' });
    expect(counterOf(notOlder.items[0])).toBe(1);
    const current = await s.currentResourceVersion();
    expect(current).toBeGreaterThanOrEqual(Number(notOlder.resourceVersion));
    expect((await storageError(s.list(prefix, { resourceVersion: String(current + 1000), resourceVersionMatch: 'NotOlderThan' }))).code).toBe('TooLargeResourceVersion');
    await s.create(key('b'), pod('b'));
    const first = await s.list(prefix, { limit: 1 });
    const withRv = await storageError(s.list(prefix, { limit: 1, continue: first.continue as string, resourceVersion: '5' }));
    expect([withRv.code, withRv.message]).toEqual(['BadRequest', 'specifying resource version is not allowed when using continue']);
    const badToken = await storageError(s.list(prefix, { limit: 1, continue: 'not a token!' }));
    expect([badToken.code, badToken.message]).toEqual(['InvalidContinue', 'invalid continue token: continue key is not valid: illegal base64 data at input byte 3']);
    const traversal = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 5, start: '../secrets/x' })).toString('base64url');
    expect((await storageError(s.list(prefix, { limit: 1, continue: traversal }))).code).toBe('InvalidContinue');
    expect((await storageError(s.list(prefix, { resourceVersion: '-3' }))).code).toBe('BadRequest');
  });

  it('expires a continue token and an exact list older than the compacted history, with 410 messages', async () => {
    const { s, prefix, key } = await fresh();
    for (let i = 0; i < 5; i++) await s.create(key(`c${i}`), pod(`c${i}`));
    const p1 = await s.list(prefix, { limit: 2 });
    await s.guaranteedUpdate(key('c4'), {}, async (c) => annotated(c as StoredObject, 1));
    await target().client.compact(await s.currentResourceVersion());
    const e = await storageError(s.list(prefix, { limit: 2, continue: p1.continue as string }));
    expect([e.code, e.message]).toEqual([
      'Expired',
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    ]);
    // The token handed out goes on from the same key at the latest revision.
    const rest = await s.list(prefix, { limit: 10, continue: e.detail?.continue as string });
    expect(rest.items.map((o) => [o.metadata.name, counterOf(o)])).toEqual([['c2', 0], ['c3', 0], ['c4', 1]]);
    const old = await storageError(s.list(prefix, { resourceVersion: p1.resourceVersion, resourceVersionMatch: 'Exact' }));
    expect([old.code, old.message]).toEqual(['Expired', 'The resourceVersion for the provided list is too old.']);
  });

  it('watches from a resourceVersion: ADDED, MODIFIED, DELETED with their revisions', async () => {
    const { s, prefix, key } = await fresh();
    const before = await s.create(key('x'), pod('x'));
    const w = new WatchReader(s.watch(prefix, { resourceVersion: before.metadata.resourceVersion as string }));
    const a = await s.create(key('a'), pod('a'));
    const m = await s.guaranteedUpdate(key('a'), {}, async (c) => annotated(c as StoredObject, 1));
    const d = await s.delete(key('a'));
    const seen = await w.until((x) => x.length >= 3, 'three events');
    expect(seen.map((e) => [e.type, e.name, e.rv])).toEqual([
      ['ADDED', 'a', a.metadata.resourceVersion],
      ['MODIFIED', 'a', m.object.metadata.resourceVersion],
      ['DELETED', 'a', d.metadata.resourceVersion],
    ]);
    // A DELETED event carries the object's last state.
    expect(counterOf(seen[2]?.object)).toBe(1);
    await w.stop();
  });

  it('watches without a resourceVersion: ADDED for every existing object first, then changes', async () => {
    const { s, prefix, key } = await fresh();
    await s.create(key('a'), pod('a'));
    await s.create(key('b'), pod('b'));
    const existing = ['a', 'b'];
    for (const resourceVersion of [undefined, '0']) {
      const w = new WatchReader(s.watch(prefix, resourceVersion === undefined ? {} : { resourceVersion }));
      await w.until((x) => x.length >= existing.length, 'the existing objects');
      const name = `c${resourceVersion ?? ''}`;
      await s.create(key(name), pod(name));
      const seen = await w.until((x) => x.length > existing.length, 'the new object');
      expect(seen.map((e) => [e.type, e.name])).toEqual([...existing, name].map((n) => ['ADDED', n]));
      existing.push(name);
      await w.stop();
    }
    const one = new WatchReader(s.watch(key('a'), {}));
    await one.until((x) => x.length >= 1, 'the one object');
    await s.guaranteedUpdate(key('b'), {}, async (c) => annotated(c as StoredObject, 1));
    await s.guaranteedUpdate(key('a'), {}, async (c) => annotated(c as StoredObject, 1));
    await one.until((x) => x.length >= 2, 'its change');
    expect(one.changes()).toEqual([['ADDED', 'a'], ['MODIFIED', 'a']]);
    await one.stop();
  });

  it('turns selector transitions into ADDED and DELETED', async () => {
    const { s, prefix, key } = await fresh();
    const start = await s.create(key('base'), pod('base'));
    const w = new WatchReader(s.watch(prefix, { resourceVersion: start.metadata.resourceVersion as string, predicate: labelled({ app: 'web' }) }));
    await s.create(key('a'), pod('a', { app: 'db' }));
    await s.guaranteedUpdate(key('a'), {}, async (c) => withLabels(c as StoredObject, { app: 'web' }));
    await s.guaranteedUpdate(key('a'), {}, async (c) => annotated(c as StoredObject, 1));
    const left = await s.guaranteedUpdate(key('a'), {}, async (c) => withLabels(c as StoredObject, { app: 'db' }));
    await s.create(key('b'), pod('b', { app: 'web' }));
    await s.delete(key('b'));
    const seen = await w.until((x) => x.length >= 5, 'five events');
    expect(w.changes()).toEqual([['ADDED', 'a'], ['MODIFIED', 'a'], ['DELETED', 'a'], ['ADDED', 'b'], ['DELETED', 'b']]);
    // Leaving the selection: the object as it was (still matching), at the revision it left.
    expect([seen[2]?.rv, (seen[2]?.object.metadata['labels'] as Record<string, string>)['app']]).toEqual([left.object.metadata.resourceVersion, 'web']);
    await w.stop();
  });

  it('ends a watch from a revision older than any history it keeps with a 410 ERROR', async () => {
    const { s, prefix, key } = await fresh();
    const a = await s.create(key('a'), pod('a'));
    await s.guaranteedUpdate(key('a'), {}, async (c) => annotated(c as StoredObject, 1));
    const head = await s.currentResourceVersion();
    await target().client.compact(head);
    // Compacted in the store, and older than the list a watch cache for this prefix started from.
    const old = 1;
    expect(Number(a.metadata.resourceVersion)).toBeGreaterThan(old);
    const w = new WatchReader(s.watch(prefix, { resourceVersion: String(old) }));
    const seen = await w.until((x) => x.length >= 1, 'the ERROR event');
    expect(seen[0]?.type).toBe('ERROR');
    const status = seen[0]?.object as Record<string, unknown>;
    expect([status['kind'], status['code'], status['reason'], status['status']]).toEqual(['Status', 410, 'Expired', 'Failure']);
    expect(status['message']).toMatch(new RegExp(`^too old resource version: ${old} \\(\\d+\\)$`));
    await waitFor('the watch to end', async () => (w.ended ? true : undefined));
  });

  it('ends a watch at its timeout', async () => {
    const { s, prefix } = await fresh();
    const w = new WatchReader(s.watch(prefix, { timeoutSeconds: 1 }));
    await waitFor('the watch to end', async () => (w.ended ? true : undefined), 15_000);
    expect(w.changes()).toEqual([]);
  });
}
