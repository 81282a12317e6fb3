// The streaming RPCs over a real port: Watch (create, progress, cancel, half-close, a client that stops
// reading while thousands of events pile up), Maintenance.Snapshot (chunks, alignment, sha256), and a
// client pinging far more often than etcdctl's 2 s without being sent away.
import { createHash } from 'node:crypto';
import http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixturePort, waitFor } from '../helpers/client-port-harness.js';
import type { FixturePort } from '../helpers/client-port-harness.js';
import { EtcdGrpcClient, bytes } from '../helpers/grpc-client.js';

interface WireEvent {
  readonly type: string;
  readonly kv: { readonly key: Buffer; readonly modRevision: string; readonly value: Buffer };
}

interface WireWatchResponse {
  readonly header: { readonly revision: string; readonly memberId: string };
  readonly watchId: string;
  readonly created: boolean;
  readonly canceled: boolean;
  readonly events: readonly WireEvent[];
}

describe('gRPC streams', () => {
  let fx: FixturePort;
  let c: EtcdGrpcClient;

  beforeAll(async () => {
    fx = await startFixturePort();
    // Catch-up responses can exceed gRPC's default 4 MiB; clientv3 accepts any size (MaxInt32) too.
    c = new EtcdGrpcClient(fx.endpoint.replace('http://', ''), undefined, { 'grpc.max_receive_message_length': -1 });
  });

  afterAll(async () => {
    c?.close();
    await fx?.close();
  });

  function openWatch(): { stream: ReturnType<EtcdGrpcClient['bidi']>; got: WireWatchResponse[] } {
    const stream = c.bidi('Watch', 'Watch');
    const got: WireWatchResponse[] = [];
    stream.on('data', (r: WireWatchResponse) => got.push(r));
    stream.on('error', () => undefined);
    return { stream, got };
  }

  it('creates watches with ids from 0, answers progress with watch_id -1, cancels, ignores empty requests', async () => {
    const { stream, got } = openWatch();
    stream.write({ createRequest: { key: bytes('s/'), rangeEnd: bytes('s0') } });
    stream.write({ createRequest: { key: bytes('other') } });
    stream.write({});
    await waitFor(() => got.filter((r) => r.created).length === 2, 'two created responses');
    expect(got.map((r) => r.watchId)).toEqual(['0', '1']);
    expect(got[0]?.header.memberId).toBe(fx.store.memberId);
    await c.call('KV', 'Put', { key: bytes('s/1'), value: bytes('a') });
    await waitFor(() => got.some((r) => r.events.length > 0), 'an event');
    stream.write({ progressRequest: {} });
    await waitFor(() => got.some((r) => r.watchId === '-1'), 'a progress response');
    const progress = got.find((r) => r.watchId === '-1');
    expect(progress?.header.revision).toBe(String(fx.store.kv.currentRev));
    stream.write({ cancelRequest: { watchId: 0 } });
    await waitFor(() => got.some((r) => r.canceled && r.watchId === '0'), 'the cancel confirmed');
    // Half-closing does not end the watch (etcd keeps sending until the client cancels the call).
    stream.end();
    await c.call('KV', 'Put', { key: bytes('other'), value: bytes('b') });
    await waitFor(() => got.some((r) => r.watchId === '1' && r.events.length === 1), 'an event after half-close');
    stream.cancel();
  });

  it('holds back a client that stops reading and loses nothing once it reads again', async () => {
    const { stream, got } = openWatch();
    stream.write({ createRequest: { key: bytes('bp/'), rangeEnd: bytes('bp0') } });
    await waitFor(() => got.some((r) => r.created), 'the watch created');
    stream.pause();
    // 300 txns of 10 puts of 4 KiB: 12 MiB of events, far beyond what the transport buffers.
    const value = Buffer.alloc(4096, 'v');
    const txns = 300;
    const perTxn = 10;
    for (let i = 0; i < txns; i++) {
      const success = Array.from({ length: perTxn }, (_, j) => ({ requestPut: { key: bytes(`bp/${j}`), value } }));
      await c.call('KV', 'Txn', { success });
    }
    // The writer was never held up; the watcher waits aside until its client reads again.
    expect(fx.store.watchable.stats().victims).toBe(1);
    stream.resume();
    const events = (): WireEvent[] => got.flatMap((r) => r.events);
    await waitFor(() => events().length >= txns * perTxn, `${txns * perTxn} events`, 60_000);
    const revs = events().map((e) => Number(e.kv.modRevision));
    expect(revs.length).toBe(txns * perTxn);
    for (let i = 0; i < revs.length; i++) expect(revs[i]).toBe((revs[0] as number) + Math.floor(i / perTxn));
    stream.cancel();
  });

  it('streams a snapshot in chunks: 512-aligned body, then its sha256', async () => {
    for (let i = 0; i < 200; i++) await c.call('KV', 'Put', { key: bytes(`snap/${i}`), value: Buffer.alloc(1024, i % 256) });
    const s = c.serverStream('Maintenance', 'Snapshot');
    const chunks: { remainingBytes: string; blob: Buffer }[] = [];
    await new Promise<void>((resolve, reject) => {
      s.on('data', (r: { remainingBytes: string; blob: Buffer }) => chunks.push(r));
      s.on('end', resolve);
      s.on('error', reject);
    });
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.every((ch) => ch.blob.length <= 32 * 1024)).toBe(true);
    expect(chunks.at(-1)?.remainingBytes).toBe('0');
    expect(chunks.slice(0, -1).every((ch) => Number(ch.remainingBytes) > 0)).toBe(true);
    const all = Buffer.concat(chunks.map((ch) => ch.blob));
    expect(all.length % 512).toBe(32);
    const body = all.subarray(0, all.length - 32);
    expect(createHash('sha256').update(body).digest()).toEqual(all.subarray(all.length - 32));
  });

  it('tolerates a burst of client pings with no calls in between', async () => {
    const session = http2.connect(fx.endpoint);
    const goaway: number[] = [];
    session.on('goaway', (code: number) => goaway.push(code));
    session.on('error', () => undefined);
    try {
      // (Node's client cancels pings asked for before the connection is up.)
      await new Promise((resolve) => session.once('connect', resolve));
      for (let i = 0; i < 200; i++) await new Promise<void>((resolve, reject) => session.ping((err) => (err ? reject(err) : resolve())));
      // Then a real call on the same connection: Maintenance.Status with an empty request.
      const req = session.request({ ':method': 'POST', ':path': '/etcdserverpb.Maintenance/Status', 'content-type': 'application/grpc', te: 'trailers' });
      const trailers = new Promise<http2.IncomingHttpHeaders>((resolve) => req.on('trailers', resolve));
      req.on('data', () => undefined);
      req.end(Buffer.from([0, 0, 0, 0, 0]));
      expect((await trailers)['grpc-status']).toBe('0');
      expect(goaway).toEqual([]);
    } finally {
      session.close();
    }
  });
});
