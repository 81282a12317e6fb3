// The peer transport between real transports on real loopback ports: delivery, batching, snapshots,
// forwarded lease calls and promotions, refusals (cluster id, removed member), round-trip times.
import * as http2 from 'node:http2';
import { status } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EtcdError } from '../../../src/kv/errors.js';
import type { Message } from '../../../src/raft/types.js';
import { msg } from '../../../src/raft/types.js';
import { PeerError } from '../../../src/server/peer/errors.js';
import { MAX_GRPC_MESSAGE_BYTES, MD_CLUSTER_ID, MD_FROM, MD_TO, peerService } from '../../../src/server/peer/proto.js';
import { app, CLUSTER, FakeMember, Harness, heartbeat, waitFor } from '../helpers/peer-harness.js';

const h = new Harness();
afterEach(() => h.closeAll());

// Peers' message streams are served straight off HTTP/2 (peer/send-call.ts); the same tests run with
// grpc-js serving them, so both paths deliver, count, refuse and end alike.
describe.each([
  { path: 'HTTP/2 fast path', fastSend: true },
  { path: 'grpc-js', fastSend: false },
])('peer transport, inbound streams through $path', ({ fastSend }) => {
  beforeEach(() => {
    h.defaults = { fastSend };
  });
  afterEach(() => {
    h.defaults = {};
  });

  describe('peer transport: messages', () => {
    it('delivers every message, in order, per peer', async () => {
      const [a, b] = await h.pair();
      const n = 5000;
      for (let i = 0; i < n; i++) {
        // Many Ready-sized sends spread over ticks, mixing types.
        a.transport.send([i % 3 === 0 ? heartbeat(1n, 2n, i) : app(1n, 2n, i)]);
        if (i % 500 === 0) await new Promise((r) => setImmediate(r));
      }
      await waitFor(() => b.member.received.length >= n, `${n} messages at member 2`);
      expect(b.member.received.map((m) => (m.type === 'heartbeat' ? m.commit : m.index))).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(a.member.unreachable).toEqual([]);
    });

    it('carries every field of a message intact', async () => {
      const [a, b] = await h.pair();
      const m: Message = msg({
        type: 'appResp',
        from: 1n,
        to: 2n,
        term: 2 ** 40,
        logTerm: 7,
        index: 2 ** 52,
        commit: 99,
        reject: true,
        rejectHint: 12,
        context: new Uint8Array([1, 2, 3]),
        entries: [
          { term: 3, index: 4, type: 'confChange', data: new Uint8Array([5]) },
          { term: 3, index: 5, type: 'normal', data: new Uint8Array(0) },
        ],
      });
      const bare = msg({ type: 'vote', from: 1n, to: 2n, term: 3, index: 4, logTerm: 2 });
      a.transport.send([m, bare]);
      await waitFor(() => b.member.received.length === 2, 'two messages');
      const [got, gotBare] = b.member.received;
      // Plain Uint8Arrays, as the core makes them, so the decoded message equals the one sent.
      expect(got).toStrictEqual(m);
      expect(got?.entries[0]?.data.constructor).toBe(Uint8Array);
      expect(gotBare).toStrictEqual(bare);
      expect(gotBare && 'context' in gotBare).toBe(false);
    });

    it("carries etcd's 64-bit member ids whole: in the identity metadata and in to and from", async () => {
      // Both past 2^63, and one value as Numbers.
      const [ida, idb] = [0xfffffffffffffff1n, 0xfffffffffffffff2n];
      const a = await h.node(ida);
      const b = await h.node(idb);
      a.transport.addPeer(idb, [b.url]);
      b.transport.addPeer(ida, [a.url]);
      a.transport.send([heartbeat(ida, idb, 7)]);
      b.transport.send([heartbeat(idb, ida, 8)]);
      await waitFor(() => b.member.received.length === 1 && a.member.received.length === 1, 'a heartbeat each way');
      expect(b.member.received[0]).toStrictEqual(heartbeat(ida, idb, 7));
      expect(a.member.received[0]).toStrictEqual(heartbeat(idb, ida, 8));
      expect([...b.transport.stats().inbound.keys()]).toEqual([ida]);
    });

    it('batches many sends into few gRPC writes', async () => {
      const [a, b] = await h.pair();
      // Let the stream come up so the count is about batching, not about buffering while dialling.
      await waitFor(() => a.transport.isActive(2n), 'stream 1->2 up');
      const n = 2000;
      for (let i = 0; i < n; i++) a.transport.send([app(1n, 2n, i, 100)]);
      await waitFor(() => b.member.received.length === n, `${n} messages`);
      const out = a.transport.stats().outbound.get(2n);
      const inbound = b.transport.stats().inbound.get(1n);
      expect(out?.messages).toBe(n);
      expect(inbound?.messages).toBe(n);
      // 2000 sends within one tick go out as one batch (≈ 250 KB, under the 1 MiB batch size).
      expect(out?.batches).toBeLessThanOrEqual(3);
      expect(inbound?.batches).toBe(out?.batches);
    });

    it('splits a batch at the batch size and still delivers in order', async () => {
      const [a, b] = await h.pair({ limits: { batchBytes: 64 * 1024 } });
      await waitFor(() => a.transport.isActive(2n), 'stream 1->2 up');
      const n = 400;
      a.transport.send(Array.from({ length: n }, (_, i) => app(1n, 2n, i, 4096)));
      await waitFor(() => b.member.received.length === n, `${n} messages`);
      expect(b.member.received.map((m) => m.index)).toEqual(Array.from({ length: n }, (_, i) => i));
      const batches = a.transport.stats().outbound.get(2n)?.batches ?? 0;
      // 400 × ~4.2 KB over 64 KiB batches: about 27 writes, never one per message.
      expect(batches).toBeGreaterThan(20);
      expect(batches).toBeLessThan(40);
    });

    it('keeps a member handler that throws from ending the stream', async () => {
      const [a, b] = await h.pair();
      let calls = 0;
      const record = b.member.onMessage.bind(b.member);
      b.member.onMessage = (m) => {
        if (calls++ === 0) throw new Error('raft: peer not found');
        record(m);
      };
      a.transport.send([heartbeat(1n, 2n, 0), heartbeat(1n, 2n, 1)]);
      a.transport.send([heartbeat(1n, 2n, 2)]);
      await waitFor(() => b.member.received.length === 2, 'messages after the throw');
      expect(b.member.received.map((m) => m.commit)).toEqual([1, 2]);
      expect(b.transport.stats().inbound.get(1n)?.failures).toBe(1);
    });

    it('measures round-trip times and reports active peers', async () => {
      const [a, b] = await h.pair({ timings: { probeIntervalMs: 20 } });
      await waitFor(() => a.transport.roundTripTimes().has(2n) && a.transport.isActive(2n), 'an RTT sample to 2');
      const rtt = a.transport.roundTripTimes().get(2n) ?? -1;
      expect(rtt).toBeGreaterThan(0);
      expect(rtt).toBeLessThan(1);
      expect(a.transport.isActive(3n)).toBe(false);
      await b.transport.close();
      await waitFor(() => !a.transport.isActive(2n), 'peer 2 inactive after it closed');
    });

    it('drops messages to unknown peers without reporting them', async () => {
      const [a] = await h.pair();
      a.transport.send([heartbeat(1n, 9n, 0)]);
      await new Promise((r) => setImmediate(r));
      expect(a.member.unreachable).toEqual([]);
      expect(a.logs.count('unknown peer')).toBe(1);
    });
  });

  describe('peer transport: refusals', () => {
    it('refuses a member of another cluster, logging it once on each side', async () => {
      const a = await h.node(1n, { timings: { backoffMaxMs: 100 } });
      const b = await h.node(2n, { clusterId: '9999' });
      a.transport.addPeer(2n, [b.url]);
      b.transport.addPeer(1n, [a.url]);
      a.transport.send([heartbeat(1n, 2n, 0)]);
      // Each side keeps dialling at the longest backoff; wait for a few refusals.
      await waitFor(() => (a.transport.stats().outbound.get(2n)?.failures ?? 0) >= 3, 'three refused attempts from 1');
      expect(b.member.received).toEqual([]);
      expect(a.member.unreachable.length).toBeGreaterThanOrEqual(3);
      expect(a.logs.count('peer refused our stream: cluster ID mismatch')).toBe(1);
      expect(b.logs.count('refused a peer call')).toBe(1);
      const refused = b.logs.lines.find((l) => l.msg === 'refused a peer call');
      expect(refused?.refusal).toBe('PEER_CLUSTER_ID_MISMATCH');
      await expect(a.transport.leaseKeepAlive(2n, '1')).rejects.toMatchObject({ code: 'PEER_CLUSTER_ID_MISMATCH' });
    });

    it('refuses a call meant for another member, naming both in hex as etcd does', async () => {
      const a = await h.node(1n);
      const b = await h.node(0x8027cae8a0e355ean);
      // Member 1 believes member cfa6ba5483271eb1 lives at member 8027cae8a0e355ea's URL.
      a.transport.addPeer(0xcfa6ba5483271eb1n, [b.url]);
      const call = a.transport.leaseKeepAlive(0xcfa6ba5483271eb1n, '1');
      await expect(call).rejects.toMatchObject({ code: 'PEER_WRONG_RECIPIENT' });
      await expect(call).rejects.toThrow(/^peer cfa6ba5483271eb1 refused the call: .*this member is 8027cae8a0e355ea, the call is for cfa6ba5483271eb1/);
    });

    it('stops sending to a removed peer for good and refuses what it sends', async () => {
      const [a, b] = await h.pair();
      a.transport.send([heartbeat(1n, 2n, 0)]);
      b.transport.send([heartbeat(2n, 1n, 0)]);
      await waitFor(() => b.member.received.length === 1 && a.member.received.length === 1, 'first exchange');

      a.transport.removePeer(2n);
      a.transport.send([heartbeat(1n, 2n, 1)]);
      expect(a.transport.isActive(2n)).toBe(false);
      await expect(a.transport.leaseKeepAlive(2n, '1')).rejects.toBeInstanceOf(PeerError);
      // Member 2 still talks to 1: its stream is ended and every new one refused.
      b.transport.send([heartbeat(2n, 1n, 1)]);
      await waitFor(() => b.logs.count('peer refused our stream: the member has been permanently removed') === 1, 'member 2 told it was removed');
      for (let i = 2; i < 5; i++) b.transport.send([heartbeat(2n, 1n, i)]);
      await waitFor(() => (b.transport.stats().outbound.get(1n)?.failures ?? 0) >= 2, 'another refused attempt');
      expect(a.member.received.map((m) => m.commit)).toEqual([0]);
      expect(b.member.received.map((m) => m.commit)).toEqual([0]);
      expect(a.logs.count('refused a peer call')).toBe(1);
      // Adding it back is refused too: member ids are never reused.
      a.transport.addPeer(2n, [b.url]);
      expect(a.transport.stats().outbound.has(2n)).toBe(false);
    });
  });


  describe('peer transport: malformed message streams', () => {
    it('answers an oversized or undecodable batch with grpc-js\'s status, and ignores the compressed flag under identity as grpc-js does', async () => {
      const [, b] = await h.pair();
      const frame = (flag: number, body: Buffer, len = body.length): Buffer => {
        const head = Buffer.alloc(5);
        head[0] = flag;
        head.writeUInt32BE(len, 1);
        return Buffer.concat([head, body]);
      };
      expect(await rawSend(b.url, frame(0, Buffer.alloc(0), MAX_GRPC_MESSAGE_BYTES + 1))).toEqual({
        status: String(status.RESOURCE_EXHAUSTED),
        message: `Received message larger than max (${MAX_GRPC_MESSAGE_BYTES + 1} vs ${MAX_GRPC_MESSAGE_BYTES})`,
      });
      expect(await rawSend(b.url, frame(0, Buffer.from([0xff, 0xff, 0xff])))).toEqual({ status: String(status.INTERNAL), message: 'Error deserializing request' });
      const batch = Buffer.from(peerService().send.requestSerialize({ messages: [heartbeat(1n, 2n, 5)] }));
      // grpc-js says 'OK'; the fast path, like grpc-go, sends no grpc-message with an OK status.
      expect(await rawSend(b.url, frame(1, batch))).toEqual({ status: String(status.OK), message: fastSend ? '' : 'OK' });
      expect(b.member.received.map((m) => m.commit)).toEqual([5]);
    });
  });
});

/** Opens a Send stream from member 1 to member 2 by hand, writes `body` and ends it; resolves with the call's status. */
async function rawSend(url: string, body: Buffer): Promise<{ status?: string; message?: string }> {
  const session = http2.connect(url);
  session.on('error', () => undefined);
  try {
    const stream = session.request({
      ':method': 'POST',
      ':path': peerService().send.path,
      'content-type': 'application/grpc',
      te: 'trailers',
      [MD_FROM]: '1',
      [MD_TO]: '2',
      [MD_CLUSTER_ID]: CLUSTER,
    });
    return await new Promise((resolve) => {
      let out: { status?: string; message?: string } = {};
      const take = (hd: http2.IncomingHttpHeaders): void => {
        const code = hd['grpc-status'];
        if (typeof code === 'string') out = { status: code, message: decodeURIComponent(String(hd['grpc-message'] ?? '')) };
      };
      stream.on('response', take);
      stream.on('trailers', take);
      stream.on('data', () => undefined);
      stream.on('error', () => undefined);
      stream.on('close', () => resolve(out));
      stream.end(body);
    });
  } finally {
    session.close();
  }
}

describe('peer transport: forwarded lease calls', () => {
  it('forwards keep-alive and time-to-live to the peer and returns its answers', async () => {
    const [a, b] = await h.pair();
    b.member.keepAlive = (id) => Promise.resolve({ ttl: id === '7205759403792793601' ? 42 : 0 });
    b.member.timeToLive = (id, keys) =>
      // etcd answers a lease that does not exist with TTL -1 (int64 on the wire).
      Promise.resolve(id === '13' ? { ttl: -1, grantedTtl: 0, keys: [] } : { ttl: 5, grantedTtl: 60, keys: keys ? [new TextEncoder().encode(`k-${id}`)] : [] });
    await expect(a.transport.leaseKeepAlive(2n, '7205759403792793601')).resolves.toEqual({ ttl: 42 });
    const ttl = await a.transport.leaseTimeToLive(2n, '12', true);
    expect({ ...ttl, keys: ttl.keys.map((k) => new TextDecoder().decode(k)) }).toEqual({ ttl: 5, grantedTtl: 60, keys: ['k-12'] });
    await expect(a.transport.leaseTimeToLive(2n, '12', false)).resolves.toMatchObject({ keys: [] });
    await expect(a.transport.leaseTimeToLive(2n, '13', false)).resolves.toEqual({ ttl: -1, grantedTtl: 0, keys: [] });
  });

  it("passes the leader's etcd error through unchanged", async () => {
    const [a, b] = await h.pair();
    b.member.keepAlive = () => Promise.reject(new EtcdError('LEASE_NOT_FOUND'));
    b.member.timeToLive = () => Promise.reject(new Error('disk on fire'));
    const err = await a.transport.leaseKeepAlive(2n, '1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EtcdError);
    expect(err).toMatchObject({ code: 'LEASE_NOT_FOUND', message: 'etcdserver: requested lease not found', grpcCode: 5 });
    await expect(a.transport.leaseTimeToLive(2n, '1', false)).rejects.toMatchObject({ message: expect.stringContaining('disk on fire') });
  });

  it('rejects a call to an unknown or unreachable peer', async () => {
    const a = await h.node(1n, { timings: { leaseCallTimeoutMs: 500 } });
    await expect(a.transport.leaseKeepAlive(7n, '1')).rejects.toMatchObject({ code: 'PEER_UNKNOWN' });
    const gone = await h.node(2n);
    const url = gone.url;
    await gone.transport.close();
    a.transport.addPeer(2n, [url]);
    await expect(a.transport.leaseKeepAlive(2n, '1')).rejects.toMatchObject({ code: 'PEER_UNREACHABLE' });
  });
});

describe('peer transport: forwarded promotion', () => {
  it("forwards the learner's id to the peer and returns its member list", async () => {
    const [a, b] = await h.pair();
    const asked: bigint[] = [];
    // Above 2^63: a Number anywhere on the way would round it.
    const learner = 2n ** 64n - 3n;
    b.member.promote = (id) => {
      asked.push(id);
      return Promise.resolve({
        members: [
          { id: '2', name: 'b', peerURLs: [b.url], clientURLs: ['http://127.0.0.1:2379'], isLearner: false },
          { id: String(id), name: '', peerURLs: ['http://127.0.0.1:1'], clientURLs: [], isLearner: false },
        ],
      });
    };
    const r = await a.transport.memberPromote(2n, learner);
    expect(asked).toEqual([learner]);
    expect(r.members).toEqual([
      { id: '2', name: 'b', peerURLs: [b.url], clientURLs: ['http://127.0.0.1:2379'], isLearner: false },
      { id: String(learner), name: '', peerURLs: ['http://127.0.0.1:1'], clientURLs: [], isLearner: false },
    ]);
  });

  it("passes the leader's refusal through with its etcd code, status and message", async () => {
    const [a, b] = await h.pair();
    b.member.promote = () => Promise.reject(new EtcdError('LEARNER_NOT_READY'));
    const err = await a.transport.memberPromote(2n, 5n).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EtcdError);
    expect(err).toMatchObject({
      code: 'LEARNER_NOT_READY',
      message: 'etcdserver: can only promote a learner member which is in sync with leader',
      grpcCode: 9,
    });
    b.member.promote = () => Promise.reject(new EtcdError('NOT_LEADER'));
    await expect(a.transport.memberPromote(2n, 5n)).rejects.toMatchObject({ code: 'NOT_LEADER', message: 'etcdserver: not leader' });
  });

  it('answers UNIMPLEMENTED from a member without the handler, and rejects an unknown peer', async () => {
    const member = new FakeMember();
    Object.assign(member, { memberPromote: undefined });
    const a = await h.node(1n);
    const b = await h.node(2n, {}, member);
    a.transport.addPeer(2n, [b.url]);
    await expect(a.transport.memberPromote(2n, 5n)).rejects.toMatchObject({ grpcCode: 12, message: expect.stringContaining('forwarded promotions') });
    await expect(a.transport.memberPromote(7n, 5n)).rejects.toMatchObject({ code: 'PEER_UNKNOWN' });
  });
});

describe('peer transport: snapshots', () => {
  const snap = (from: bigint, to: bigint): Message =>
    msg({
      type: 'snap',
      from,
      to,
      term: 4,
      snapshot: { data: new Uint8Array([7, 7]), metadata: { index: 1000, term: 3, confState: { voters: [1n, 2n, 3n], learners: [4n] } } },
    });

  it('streams a 50 MiB key-value state without holding it in memory, then reports success', async () => {
    const [a, b] = await h.pair();
    const chunkSize = 256 * 1024;
    const total = 50 * 1024 * 1024;
    let produced = 0;
    let consumed = 0;
    let maxAhead = 0;
    a.member.kvSource = async function* () {
      // Generated lazily; each chunk's first bytes carry its offset so the receiver can check order.
      for (let off = 0; off < total; off += chunkSize) {
        const c = new Uint8Array(chunkSize);
        new DataView(c.buffer).setFloat64(0, off);
        produced += chunkSize;
        maxAhead = Math.max(maxAhead, produced - consumed);
        yield c;
      }
    };
    let header: Message | undefined;
    let inOrder = true;
    b.member.snapshotReceiver = async (m, kv) => {
      header = m;
      for await (const c of kv) {
        if (new DataView(c.buffer, c.byteOffset, c.byteLength).getFloat64(0) !== consumed) inOrder = false;
        consumed += c.length;
        // A receiver slower than loopback (staging to disk), so the sender has to wait for it.
        if (consumed % (4 * 1024 * 1024) === 0) await new Promise((r) => setTimeout(r, 2));
      }
    };
    a.transport.send([snap(1n, 2n)]);
    await waitFor(() => a.member.snapshotReports.length === 1, 'snapshot report', 60_000);
    expect(a.member.snapshotReports).toEqual([{ id: 2n, ok: true }]);
    expect(consumed).toBe(total);
    expect(inOrder).toBe(true);
    expect(header?.snapshot?.metadata).toEqual({ index: 1000, term: 3, confState: { voters: [1n, 2n, 3n], learners: [4n] } });
    expect([...(header?.snapshot?.data ?? [])]).toEqual([7, 7]);
    // The sender read ahead of the receiver by at most a few MiB of flow-control windows and buffers.
    expect(maxAhead).toBeLessThan(16 * 1024 * 1024);
    expect(a.member.unreachable).toEqual([]);
    expect(b.transport.stats().inbound.get(1n)?.snapshots).toBe(1);
  });

  it('reports failure when the receiver throws, and the next snapshot still goes', async () => {
    const [a, b] = await h.pair();
    a.member.kvSource = async function* () {
      for (let i = 0; i < 100; i++) yield new Uint8Array(64 * 1024);
    };
    let attempt = 0;
    b.member.snapshotReceiver = async (_m, kv) => {
      let n = 0;
      for await (const _ of kv) if (++n === 10 && attempt === 0) throw new Error('no space left on device');
      attempt++;
    };
    a.transport.send([snap(1n, 2n)]);
    await waitFor(() => a.member.snapshotReports.length === 1, 'first snapshot report');
    expect(a.member.snapshotReports[0]).toEqual({ id: 2n, ok: false });
    expect(a.member.unreachable).toContain(2n);
    attempt = 1;
    a.transport.send([snap(1n, 2n)]);
    await waitFor(() => a.member.snapshotReports.length === 2, 'second snapshot report');
    expect(a.member.snapshotReports[1]).toEqual({ id: 2n, ok: true });
  });

  it('reports failure when the key-value source fails or yields a chunk over the limit', async () => {
    const [a, b] = await h.pair();
    a.member.kvSource = async function* () {
      yield new Uint8Array(10);
      throw new Error('backend closed');
    };
    a.transport.send([snap(1n, 2n)]);
    await waitFor(() => a.member.snapshotReports.length === 1, 'report after a failing source');
    a.member.kvSource = async function* () {
      yield new Uint8Array(5 * 1024 * 1024);
    };
    a.transport.send([snap(1n, 2n)]);
    await waitFor(() => a.member.snapshotReports.length === 2, 'report after an oversized chunk');
    expect(a.member.snapshotReports).toEqual([
      { id: 2n, ok: false },
      { id: 2n, ok: false },
    ]);
    expect(b.transport.stats().inbound.get(1n)?.snapshots ?? 0).toBe(0);
  });

  it('fails a snapshot whose receiver never answers, once the stall timeout passes', async () => {
    const [a, b] = await h.pair({ timings: { snapshotStallTimeoutMs: 300 } });
    a.member.kvSource = async function* () {
      yield new Uint8Array(10);
    };
    b.member.snapshotReceiver = () => new Promise(() => {});
    a.transport.send([snap(1n, 2n)]);
    await waitFor(() => a.member.snapshotReports.length === 1, 'report after the stall');
    expect(a.member.snapshotReports).toEqual([{ id: 2n, ok: false }]);
  });
});
