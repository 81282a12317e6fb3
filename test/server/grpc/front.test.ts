// gRPC on the client port's own HTTP/2 server (src/server/grpc/front.ts over http2/server-connection.ts).
// The fast-unary suite already compares its answers with grpc-js's header for header; this covers what a
// protocol implementation must get right beyond single small calls: flow control both ways (a response
// bigger than the client's window, a watch stream the client stops reading, a relayed stream that grpc-js
// ends while the client holds it back), resets, pings, connection errors, GOAWAY and keepalive.
import { connect } from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream } from 'node:http2';
import net from 'node:net';
import { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdServiceDefinition } from '../../../src/server/v3rpc/etcd-proto.js';
import { frameMessages, MessageReader } from '../../../src/server/grpc/coalesce.js';
import { encodeHeaders } from '../../../src/server/http2/hpack.js';
import type { FixturePort } from '../helpers/client-port-harness.js';
import { startFixturePort, testLogger, waitFor } from '../helpers/client-port-harness.js';
import { serveGrpcFront } from '../../../src/server/grpc/front.js';
import type { FastStreamMethod, GrpcFrontOptions } from '../../../src/server/grpc/front.js';
import { duplexPair } from '../../../src/server/grpc/relay.js';
import type { BidiTransport } from '../../../src/server/grpc/bidi.js';
import { frame } from '../http2/raw-h2.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

const KV = etcdServiceDefinition('KV');
const WATCH = etcdServiceDefinition('Watch');
const method = (def: typeof KV, name: string): NonNullable<(typeof KV)[string]> => {
  const m = def[name];
  if (!m) throw new Error(name);
  return m;
};

/** Writes one request on a new stream; resolves with the response's messages and grpc-status. */
function unary(session: ClientHttp2Session, path: string, msg: Buffer): Promise<{ status: string | undefined; messages: Buffer[] }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
    const reader = new MessageReader();
    const messages: Buffer[] = [];
    let status: string | undefined;
    stream.on('response', (h) => (status ??= h['grpc-status'] as string | undefined));
    stream.on('trailers', (t) => (status = t['grpc-status'] as string | undefined));
    stream.on('data', (d: Buffer) => messages.push(...reader.push(d).messages));
    stream.on('error', reject);
    stream.on('close', () => resolve({ status, messages }));
    stream.end(frameMessages([msg]));
  });
}

describe('the client port serving HTTP/2 itself', () => {
  let port: FixturePort;
  const sessions: ClientHttp2Session[] = [];
  const open = (): ClientHttp2Session => {
    const s = connect(port.endpoint);
    s.on('error', () => undefined);
    sessions.push(s);
    return s;
  };

  beforeAll(async () => {
    port = await startFixturePort({ maxRequestBytes: 3 * 1024 * 1024 });
  });
  afterAll(async () => {
    for (const s of sessions) s.destroy();
    await port?.close();
  });

  it('takes a request and gives a response both far larger than the windows, waiting for window updates', async () => {
    const s = open();
    const value = Buffer.alloc(2 * 1024 * 1024);
    for (let i = 0; i < value.length; i++) value[i] = (i * 31) & 0xff;
    const put = method(KV, 'Put');
    const range = method(KV, 'Range');
    const p = await unary(s, put.path, put.requestSerialize({ key: Buffer.from('big'), value }));
    expect(p.status).toBe('0');
    const r = await unary(s, range.path, range.requestSerialize({ key: Buffer.from('big') }));
    expect(r.status).toBe('0');
    expect(r.messages).toHaveLength(1);
    const res = range.responseDeserialize(r.messages[0] as Buffer) as { kvs: { value: Uint8Array }[] };
    expect(Buffer.from(res.kvs[0]?.value ?? []).equals(value)).toBe(true);
  });

  it('holds a watch stream the client stops reading, then delivers every event in order', async () => {
    const s = open();
    const watch = method(WATCH, 'Watch');
    const put = method(KV, 'Put');
    const stream: ClientHttp2Stream = s.request({ ':method': 'POST', ':path': watch.path, 'content-type': 'application/grpc', te: 'trailers' });
    const reader = new MessageReader();
    const events: { value: Buffer; rev: string }[] = [];
    let created = false;
    stream.on('data', (d: Buffer) => {
      for (const m of reader.push(d).messages) {
        const r = watch.responseDeserialize(m) as { created?: boolean; events?: { kv: { value: Uint8Array; modRevision: string } }[] };
        if (r.created) created = true;
        for (const e of r.events ?? []) events.push({ value: Buffer.from(e.kv.value), rev: String(e.kv.modRevision) });
      }
    });
    stream.write(frameMessages([watch.requestSerialize({ createRequest: { key: Buffer.from('w') } })]));
    await until(() => created);
    stream.pause();
    const values = [0x61, 0x62, 0x63, 0x64].map((c) => Buffer.alloc(700 * 1024, c));
    for (const value of values) expect((await unary(s, put.path, put.requestSerialize({ key: Buffer.from('w'), value }))).status).toBe('0');
    // Nothing read: the server fills this client's window, then must wait for it, not drop or reorder.
    await until(() => windowShut(stream));
    expect(events.length).toBeLessThan(values.length);
    stream.resume();
    await until(() => events.length === values.length);
    expect(events.map((e) => e.value[0])).toEqual([0x61, 0x62, 0x63, 0x64]);
    expect(events.every((e, i) => e.value.equals(values[i] as Buffer))).toBe(true);
    stream.close();
  });

  it('delivers all of a relayed stream that grpc-js ended while the client still held its window shut', async () => {
    const s = open();
    const put = method(KV, 'Put');
    const value = Buffer.alloc(200 * 1024, 0x73);
    for (let i = 0; i < 3; i++) expect((await unary(s, put.path, put.requestSerialize({ key: Buffer.from(`snap/${i}`), value }))).status).toBe('0');
    const snapshot = method(etcdServiceDefinition('Maintenance'), 'Snapshot');
    const stream = s.request({ ':method': 'POST', ':path': snapshot.path, 'content-type': 'application/grpc', te: 'trailers' });
    const reader = new MessageReader();
    let bytes = 0;
    let status: string | undefined;
    let rst: number | undefined;
    stream.on('data', (d: Buffer) => {
      for (const m of reader.push(d).messages) bytes += (snapshot.responseDeserialize(m) as { blob: Uint8Array }).blob.length;
    });
    stream.on('trailers', (t) => (status = t['grpc-status'] as string | undefined));
    stream.on('error', () => undefined);
    const closed = new Promise<void>((r) => stream.on('close', () => ((rst = stream.rstCode), r())));
    stream.end(frameMessages([snapshot.requestSerialize({})]));
    await new Promise((r) => stream.once('data', r));
    stream.pause();
    // grpc-js sends the whole snapshot (under the relay's 1 MiB mark) and ends its stream while most of
    // it still waits here for this client's window; the end must wait behind that data, not cut it off.
    await until(() => windowShut(stream));
    expect(status).toBeUndefined();
    stream.resume();
    await closed;
    expect(rst).toBe(0);
    expect(status).toBe('0');
    expect(bytes).toBeGreaterThan(3 * value.length);
  });

  it('gives a long-lived stream its window back: 3,000 watches created on one stream, far past 64 KiB', async () => {
    const s = open();
    const watch = method(WATCH, 'Watch');
    const stream = s.request({ ':method': 'POST', ':path': watch.path, 'content-type': 'application/grpc', te: 'trailers' });
    stream.on('error', () => undefined);
    const reader = new MessageReader();
    let created = 0;
    stream.on('data', (d: Buffer) => {
      for (const m of reader.push(d).messages) if ((watch.responseDeserialize(m) as { created?: boolean }).created) created++;
    });
    const key = Buffer.alloc(40, 0x6b);
    for (let i = 0; i < 3000; i++) stream.write(frameMessages([watch.requestSerialize({ createRequest: { key } })]));
    // Node's client holds the rest back once the stream's 65,535-byte window is used up: they arrive only
    // if the server returns window as it reads.
    await until(() => created === 3000);
    stream.close(8);
  });

  it('keeps serving a connection after the client resets a watch stream, and answers pings', async () => {
    const s = open();
    const watch = method(WATCH, 'Watch');
    const stream = s.request({ ':method': 'POST', ':path': watch.path, 'content-type': 'application/grpc', te: 'trailers' });
    stream.on('error', () => undefined);
    stream.write(frameMessages([watch.requestSerialize({ createRequest: { key: Buffer.from('r') } })]));
    await new Promise((r) => stream.once('data', r));
    stream.close(8); // CANCEL
    const rtt = await new Promise<number>((resolve, reject) => s.ping((err, ms) => (err ? reject(err) : resolve(ms))));
    expect(rtt).toBeGreaterThanOrEqual(0);
    const range = method(KV, 'Range');
    expect((await unary(s, range.path, range.requestSerialize({ key: Buffer.from('r') }))).status).toBe('0');
  });

  it('serves more long-lived streams on one connection than an HTTP/2 client assumes before SETTINGS (100)', async () => {
    const s = open();
    const watch = method(WATCH, 'Watch');
    const streams = Array.from({ length: 150 }, (_, i) => {
      const st = s.request({ ':method': 'POST', ':path': watch.path, 'content-type': 'application/grpc', te: 'trailers' });
      st.on('error', () => undefined);
      st.write(frameMessages([watch.requestSerialize({ createRequest: { key: Buffer.from(`many/${i}`) } })]));
      return st;
    });
    await Promise.all(streams.map((st) => new Promise((r) => st.once('data', r))));
    for (const st of streams) st.close(8);
  });

  it('ends a connection that breaks the protocol with GOAWAY and the error code', async () => {
    const cases: [string, Buffer, number][] = [
      ['DATA on stream 0', frame(0x0, 0, 0, Buffer.from('x')), 0x1],
      ['an unreadable header block', frame(0x1, 0x4 | 0x1, 1, hex('ff ff ff ff ff')), 0x9],
      ['a frame above the size it may send', frame(0x0, 0, 1, Buffer.alloc(20_000)), 0x6],

    ];
    for (const [what, bad, code] of cases) {
      const goaway = await rawExchange(port.endpoint, bad);
      expect(goaway, what).toBeDefined();
      expect(goaway?.readUInt32BE(4), what).toBe(code);
    }
  });
});

/**
 * Serves one in-memory connection that opens with the preface, an empty SETTINGS, a request's HEADERS on
 * stream 1 for `path`, then `more`; `frames()` parses what the server wrote so far.
 */
function serveBytes(path: string, more: Buffer[], streams: GrpcFrontOptions['streams'] = new Map()): { frames(): [type: number, id: number, payload: Buffer][]; close(): void } {
  const written: Buffer[] = [];
  const sock = new Duplex({ read() {}, write(chunk: Buffer, _e, cb) { written.push(chunk); cb(); } });
  const head = Buffer.concat([
    Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
    frame(0x4, 0, 0, Buffer.alloc(0)),
    frame(0x1, 0x4, 1, encodeHeaders([[':method', 'POST'], [':scheme', 'http'], [':path', path], ['content-type', 'application/grpc']])),
    ...more,
  ]);
  serveGrpcFront(sock as unknown as net.Socket, head, {
    fast: new Map(),
    streams,
    maxReceive: 1024,
    log: testLogger(),
    keepaliveTimeMs: 60_000,
    keepaliveTimeoutMs: 60_000,
    backend: () => duplexPair()[0],
  });
  return {
    frames() {
      const out = Buffer.concat(written);
      const frames: [number, number, Buffer][] = [];
      for (let at = 0; at + 9 <= out.length; at += 9 + out.readUIntBE(at, 3)) {
        frames.push([out[at + 3] as number, out.readUInt32BE(at + 5), out.subarray(at + 9, at + 9 + out.readUIntBE(at, 3))]);
      }
      return frames;
    },
    close: () => sock.destroy(),
  };
}

describe('the HTTP/2 server on bytes handed to it at once', () => {
  it('ends a connection whose client sends past the connection window it was given', () => {
    // All of it arrives in one read, so no window update can go out in between.
    const conn = serveBytes('/x', Array.from({ length: 5 }, () => frame(0x0, 0, 1, Buffer.alloc(16_000))));
    const goaway = conn.frames().find(([type]) => type === 0x7)?.[2];
    expect(goaway?.readUInt32BE(4)).toBe(0x3); // FLOW_CONTROL_ERROR
    conn.close();
  });
});

describe('a bidi stream served here', () => {
  it('sends messages written in place and messages written whole in the order they were written', async () => {
    // Sizes that fill the in-place buffers unevenly and one message bigger than a whole buffer.
    const sizes = [1, 0, 5000, 7000, 20_000, 3, 9000, 4000];
    const want: Buffer[] = [];
    const wholeEvery = 3;
    const method: FastStreamMethod = {
      path: '/t/Bidi',
      deserialize: (b: Buffer) => b,
      serialize: (r: unknown) => r as Buffer,
      open: (t: BidiTransport) => {
        sizes.forEach((n, i) => {
          const body = Buffer.alloc(n, i + 1);
          want.push(body);
          if (i % wholeEvery === 0) t.write(body);
          else t.writeEncoded?.({ length: n, writeTo: (buf, at) => void body.copy(buf, at) });
        });
        return { request() {}, halfClose() {}, cancel() {}, room() {} };
      },
    };
    const conn = serveBytes(method.path, [], new Map([[method.path, method]]));
    const data = (): Buffer => Buffer.concat(conn.frames().filter(([type, id]) => type === 0x0 && id === 1).map(([, , payload]) => payload));
    await until(() => data().length >= sizes.reduce((x, n) => x + 5 + n, 0));
    const got = new MessageReader().push(data()).messages;
    expect(got.map((m) => m.length)).toEqual(sizes);
    expect(got.every((m, i) => m.equals(want[i] as Buffer))).toBe(true);
    conn.close();
  });
});

const until = (cond: () => boolean): Promise<void> => waitFor(cond, 'a condition of the test');

/** The server has used up all of this paused stream's window: it can send nothing more until the client reads. */
function windowShut(stream: ClientHttp2Stream): boolean {
  return stream.state.localWindowSize === 0;
}

/** Sends the preface, an empty SETTINGS and `bad`; returns the GOAWAY payload the server answers with. */
function rawExchange(endpoint: string, bad: Buffer): Promise<Buffer | undefined> {
  const { hostname, port } = new URL(endpoint);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), hostname);
    let buf = Buffer.alloc(0);
    let goaway: Buffer | undefined;
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 9 && buf.length >= 9 + buf.readUIntBE(0, 3)) {
        const len = buf.readUIntBE(0, 3);
        if (buf[3] === 0x7) goaway = Buffer.from(buf.subarray(9, 9 + len));
        buf = buf.subarray(9 + len);
      }
    });
    sock.on('error', reject);
    sock.on('close', () => resolve(goaway));
    sock.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(0x4, 0, 0, Buffer.alloc(0)), bad]));
  });
}

describe('the client port HTTP/2 server, stopping and keepalive', () => {
  it('sends GOAWAY with NO_ERROR to its clients when the port closes', async () => {
    const port = await startFixturePort();
    const s = connect(port.endpoint);
    s.on('error', () => undefined);
    try {
      const range = method(KV, 'Range');
      expect((await unary(s, range.path, range.requestSerialize({ key: Buffer.from('a') }))).status).toBe('0');
      const goaway = new Promise<number>((resolve) => s.once('goaway', (code: number) => resolve(code)));
      await port.close();
      expect(await goaway).toBe(0);
    } finally {
      s.destroy();
    }
  });

  it('pings a silent client and drops it when the PING goes unanswered', async () => {
    const port = await startFixturePort({ keepalive: { timeMs: 100, timeoutMs: 100 } });
    try {
      const { hostname, port: p } = new URL(port.endpoint);
      const sock = net.connect(Number(p), hostname);
      const seen: number[] = [];
      sock.on('data', (d: Buffer) => {
        for (let at = 0; at + 9 <= d.length; at += 9 + d.readUIntBE(at, 3)) seen.push(d[at + 3] as number);
      });
      sock.on('error', () => undefined);
      sock.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(0x4, 0, 0, Buffer.alloc(0))]));
      await new Promise((r) => sock.once('close', r));
      expect(seen).toContain(0x6); // the PING it did not answer
    } finally {
      await port.close();
    }
  });
});
