// The gRPC edge with a raw grpc-js client: the statuses and exact messages etcd clients match on, the
// request size limits (etcd's own and gRPC's), response headers with exact 64-bit ids, the leader and
// learner checks, and the health service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metadata, status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { startFixturePort, waitFor } from '../helpers/client-port-harness.js';
import type { FixturePort } from '../helpers/client-port-harness.js';
import { EtcdGrpcClient, bytes, requireLeader } from '../helpers/grpc-client.js';

async function failure(p: Promise<unknown> | (() => Promise<unknown>)): Promise<{ code: number; details: string }> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    const err = e as ServiceError;
    return { code: err.code, details: err.details };
  }
  throw new Error('expected the call to fail');
}

describe('gRPC edge: errors, limits, headers', () => {
  let fx: FixturePort;
  let c: EtcdGrpcClient;

  beforeAll(async () => {
    fx = await startFixturePort({ electionTimeoutMs: 50 });
    c = new EtcdGrpcClient(fx.endpoint.replace('http://', ''));
  });

  afterAll(async () => {
    c?.close();
    await fx?.close();
  });

  it('answers etcd errors with their gRPC code and exact message', async () => {
    const cases: [() => Promise<unknown>, number, string][] = [
      [() => c.call('KV', 'Range', { key: bytes('') }), status.INVALID_ARGUMENT, 'etcdserver: key is not provided'],
      [() => c.call('KV', 'Put', { key: bytes(''), value: bytes('v') }), status.INVALID_ARGUMENT, 'etcdserver: key is not provided'],
      [() => c.call('KV', 'DeleteRange', { key: bytes('') }), status.INVALID_ARGUMENT, 'etcdserver: key is not provided'],
      [() => c.call('KV', 'Put', { key: bytes('k'), value: bytes('v'), ignoreValue: true }), status.INVALID_ARGUMENT, 'etcdserver: value is provided'],
      [() => c.call('KV', 'Put', { key: bytes('absent'), ignoreValue: true }), status.INVALID_ARGUMENT, 'etcdserver: key not found'],
      [() => c.call('KV', 'Put', { key: bytes('k'), lease: '777' }), status.NOT_FOUND, 'etcdserver: requested lease not found'],
      [() => c.call('KV', 'Range', { key: bytes('k'), revision: 1000 }), status.OUT_OF_RANGE, 'etcdserver: mvcc: required revision is a future revision'],
      [() => c.call('KV', 'Compact', { revision: 1000 }), status.OUT_OF_RANGE, 'etcdserver: mvcc: required revision is a future revision'],
      [() => c.call('KV', 'Txn', { success: [{}] }), status.INVALID_ARGUMENT, 'etcdserver: key not found'],
      [() => c.call('Lease', 'LeaseRevoke', { ID: '42' }), status.NOT_FOUND, 'etcdserver: requested lease not found'],
      [() => c.call('Lease', 'LeaseGrant', { TTL: '9000000001' }), status.OUT_OF_RANGE, 'etcdserver: too large lease TTL'],
      [() => c.call('Cluster', 'MemberRemove', { ID: '5' }), status.NOT_FOUND, 'etcdserver: member not found'],
      // The fake StoreApi has no auth store (a member's is tested in test/e2e/auth-cluster.test.ts and the etcdctl differential).
      [() => c.call('Auth', 'UserAdd', { name: 'u', password: 'p' }), status.UNIMPLEMENTED, 'etcdserver: this store has no auth store'],
    ];
    for (const [p, code, details] of cases) expect(await failure(p)).toEqual({ code, details });
  });

  it('answers compacted revisions with OUT_OF_RANGE', async () => {
    const r1 = await c.call<{ header: { revision: string } }>('KV', 'Put', { key: bytes('cmp'), value: bytes('1') });
    await c.call('KV', 'Put', { key: bytes('cmp'), value: bytes('2') });
    await c.call('KV', 'Compact', { revision: Number(r1.header.revision) + 1, physical: true });
    expect(await failure(c.call('KV', 'Range', { key: bytes('cmp'), revision: r1.header.revision }))).toEqual({
      code: status.OUT_OF_RANGE,
      details: 'etcdserver: mvcc: required revision has been compacted',
    });
    expect(await failure(c.call('KV', 'Compact', { revision: r1.header.revision }))).toMatchObject({ code: status.OUT_OF_RANGE });
  });

  it('refuses a txn with more than 128 ops in a branch, and duplicate keys', async () => {
    const puts = (n: number) => Array.from({ length: n }, (_, i) => ({ requestPut: { key: bytes(`op${i}`), value: bytes('x') } }));
    expect(await failure(c.call('KV', 'Txn', { success: puts(129) }))).toEqual({
      code: status.INVALID_ARGUMENT,
      details: 'etcdserver: too many operations in txn request',
    });
    await c.call('KV', 'Txn', { success: puts(128) });
    const dup = [{ requestPut: { key: bytes('d'), value: bytes('1') } }, { requestPut: { key: bytes('d'), value: bytes('2') } }];
    expect(await failure(c.call('KV', 'Txn', { success: dup }))).toEqual({
      code: status.INVALID_ARGUMENT,
      details: 'etcdserver: duplicate key given in txn request',
    });
  });

  it('limits what etcd would propose to MaxRequestBytes, and everything to gRPC max receive', async () => {
    const big = Buffer.alloc(1_600_000, 'x');
    expect(await failure(c.call('KV', 'Put', { key: bytes('big'), value: big }))).toEqual({
      code: status.INVALID_ARGUMENT,
      details: 'etcdserver: request is too large',
    });
    const bigTxn = { success: [{ requestPut: { key: bytes('big'), value: big } }] };
    expect(await failure(c.call('KV', 'Txn', bigTxn))).toMatchObject({ details: 'etcdserver: request is too large' });
    // etcd's request checks come before the size limit.
    expect(await failure(c.call('KV', 'Put', { key: bytes(''), value: big }))).toMatchObject({ details: 'etcdserver: key is not provided' });
    const badTxn = { success: [{ requestPut: { key: bytes('big'), value: big } }, { requestPut: { key: bytes('big'), value: bytes('') } }] };
    expect(await failure(c.call('KV', 'Txn', badTxn))).toMatchObject({ details: 'etcdserver: duplicate key given in txn request' });
    // Reads are not proposed: a range or a read-only txn that size is served.
    await c.call('KV', 'Range', { key: big });
    await c.call('KV', 'Txn', { compare: [{ key: bytes('k'), target: 'VALUE', value: big }], success: [{ requestRange: { key: bytes('k') } }] });
    await c.call('KV', 'Put', { key: bytes('fits'), value: Buffer.alloc(1_500_000, 'y') });
    // Beyond MaxRequestBytes + 512 KiB gRPC itself refuses the message.
    const huge = await failure(c.call('KV', 'Put', { key: bytes('huge'), value: Buffer.alloc(2_200_000, 'z') }));
    expect(huge.code).toBe(status.RESOURCE_EXHAUSTED);
  });

  it('fills headers with exact 64-bit ids; ops inside a txn carry only their revision', async () => {
    const r = await c.call<{ header: Record<string, string> }>('KV', 'Range', { key: bytes('k') });
    expect(r.header).toEqual({ clusterId: fx.store.clusterId, memberId: fx.store.memberId, revision: String(fx.store.kv.currentRev), raftTerm: '2' });
    const t = await c.call<{ header: Record<string, string>; responses: { responsePut?: { header: Record<string, string> } }[] }>('KV', 'Txn', {
      success: [{ requestPut: { key: bytes('t'), value: bytes('1') } }],
    });
    expect(t.header.memberId).toBe(fx.store.memberId);
    expect(t.responses[0]?.responsePut?.header).toEqual({ clusterId: '0', memberId: '0', revision: t.header.revision, raftTerm: '0' });
    const st = await c.call<Record<string, unknown>>('Maintenance', 'Status');
    expect(st).toMatchObject({ version: '3.4.23', leader: fx.store.memberId, isLearner: false });
    const members = await c.call<{ members: { ID: string }[] }>('Cluster', 'MemberList');
    expect(members.members.map((m) => m.ID)).toEqual([fx.store.memberId]);
  });

  it('turns unexpected store failures into UNKNOWN with the message', async () => {
    const original = fx.store.hash.bind(fx.store);
    fx.store.hash = () => Promise.reject(new Error('disk on fire'));
    try {
      expect(await failure(c.call('Maintenance', 'Hash'))).toEqual({ code: status.UNKNOWN, details: 'disk on fire' });
    } finally {
      fx.store.hash = original;
    }
  });

  it('answers leases: keep-alive of an unknown lease is TTL 0, time-to-live -1', async () => {
    const ttl = await c.call<{ TTL: string }>('Lease', 'LeaseTimeToLive', { ID: '99' });
    expect(ttl.TTL).toBe('-1');
    const ka = c.bidi('Lease', 'LeaseKeepAlive');
    const got: Record<string, unknown>[] = [];
    ka.on('data', (r: Record<string, unknown>) => got.push(r));
    const ended = new Promise<void>((resolve) => ka.on('status', () => resolve()));
    const g = await c.call<{ ID: string; TTL: string }>('Lease', 'LeaseGrant', { TTL: 30 });
    ka.write({ ID: '99' });
    ka.write({ ID: g.ID });
    ka.end();
    await ended;
    expect(got.map((r) => [r['ID'], r['TTL']])).toEqual([
      ['99', '0'],
      [g.ID, '30'],
    ]);
  });

  it('serves grpc.health.v1', async () => {
    expect(await c.call('Health', 'Check', { service: '' })).toEqual({ status: 'SERVING' });
    expect(await failure(c.call('Health', 'Check', { service: 'nope' }))).toMatchObject({ code: status.NOT_FOUND });
  });

  it('refuses leader-requiring calls without a leader; others still pass', async () => {
    fx.store.leader = '0';
    try {
      expect(await failure(c.call('KV', 'Range', { key: bytes('k') }, requireLeader()))).toEqual({
        code: status.UNAVAILABLE,
        details: 'etcdserver: no leader',
      });
      await c.call('KV', 'Range', { key: bytes('k') }, new Metadata());
      const w = c.bidi('Watch', 'Watch', requireLeader());
      w.on('error', () => undefined);
      const st = await new Promise<{ code: number; details: string }>((resolve) => w.on('status', resolve));
      expect(st).toMatchObject({ code: status.UNAVAILABLE, details: 'etcdserver: no leader' });
    } finally {
      fx.store.leader = fx.store.memberId;
    }
  });

  it('cancels open leader-requiring streams once the leader is gone for three election timeouts', async () => {
    const needy = c.bidi('Watch', 'Watch', requireLeader());
    const relaxed = c.bidi('Watch', 'Watch');
    needy.on('error', () => undefined);
    relaxed.on('error', () => undefined);
    const created: string[] = [];
    needy.on('data', (r: Record<string, unknown>) => r['created'] && created.push('needy'));
    relaxed.on('data', (r: Record<string, unknown>) => r['created'] && created.push('relaxed'));
    needy.write({ createRequest: { key: bytes('lost') } });
    relaxed.write({ createRequest: { key: bytes('lost') } });
    await waitFor(() => created.length === 2, 'both watches created');
    const ended = new Promise<{ code: number; details: string }>((resolve) => needy.on('status', resolve));
    fx.store.leader = '0';
    try {
      expect(await ended).toMatchObject({ code: status.UNAVAILABLE, details: 'etcdserver: no leader' });
    } finally {
      fx.store.leader = fx.store.memberId;
    }
    // The stream that did not ask for a leader is still delivering.
    const events: unknown[] = [];
    relaxed.on('data', (r: { events: unknown[] }) => events.push(...r.events));
    await c.call('KV', 'Put', { key: bytes('lost'), value: bytes('still here') });
    await waitFor(() => events.length === 1, 'the relaxed watch to see the put');
    relaxed.cancel();
  });

  it('lets a learner serve only serializable ranges and Status', async () => {
    fx.store.learner = true;
    try {
      // The learner flag is polled every election timeout (50 ms here).
      await waitFor(
        () =>
          c.call('KV', 'Put', { key: bytes('l'), value: bytes('1') }).then(
            () => false,
            (e: ServiceError) => e.details === 'etcdserver: rpc not supported for learner',
          ),
        'writes refused on a learner',
      );
      expect(await failure(c.call('KV', 'Range', { key: bytes('l') }))).toMatchObject({ code: status.UNAVAILABLE });
      await c.call('KV', 'Range', { key: bytes('l'), serializable: true });
      await c.call('Maintenance', 'Status');
    } finally {
      fx.store.learner = false;
    }
    await waitFor(
      () =>
        c.call('KV', 'Put', { key: bytes('l'), value: bytes('1') }).then(
          () => true,
          () => false,
        ),
      'writes accepted again',
    );
  });
});
