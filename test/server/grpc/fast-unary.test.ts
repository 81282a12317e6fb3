// The fast unary path (src/server/grpc/fast-unary.ts) answers as grpc-js does. The same raw HTTP/2
// requests — good ones and every malformed kind the fast path handles itself or hands back — go to the
// client port and to plain grpc-js serving the same services (the reference, wired here: no client port
// serves that way), and the answers must match header for header, but
// for an OK answer's headers and trailers, which are etcd's (grpc-go's): grpc-js adds three more fields.
import { status } from '@grpc/grpc-js';
import { connect } from 'node:http2';
import type { IncomingHttpHeaders } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdServiceDefinition } from '../../../src/server/v3rpc/etcd-proto.js';
import net from 'node:net';
import type { FixturePort } from '../helpers/client-port-harness.js';
import { startFixturePort, testLogger } from '../helpers/client-port-harness.js';
import { SingleNodeStore } from '../helpers/single-node-store.js';
import { createEtcdGrpc } from '../../../src/server/v3rpc/etcd-grpc.js';
import { createMetrics } from '../../../src/server/embed/metrics.js';

const MAX_REQUEST_BYTES = 64 * 1024;
const KV = etcdServiceDefinition('KV');
const PUT = '/etcdserverpb.KV/Put';
const RANGE = '/etcdserverpb.KV/Range';

interface Answer {
  readonly headers: Record<string, unknown>;
  readonly trailers: Record<string, unknown>;
  readonly data: Buffer;
}

const frame = (msg: Buffer, flag = 0): Buffer => {
  const out = Buffer.alloc(5 + msg.length);
  out[0] = flag;
  out.writeUInt32BE(msg.length, 1);
  msg.copy(out, 5);
  return out;
};

const encode = (path: string, req: object): Buffer => {
  const m = Object.values(KV).find((d) => d.path === path);
  if (!m) throw new Error(path);
  return m.requestSerialize(req);
};

/** Drops what differs between any two answers (the date) and between the two stores (ids in the body). */
function clean(h: IncomingHttpHeaders): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(h)) if (k !== 'date') out[k] = v;
  return out;
}

/** An OK answer's headers and trailers from the fast path (as etcd sends them), and grpc-js's. */
const OK_HEADERS = { ':status': 200, 'content-type': 'application/grpc' };
const OK_TRAILERS = { 'grpc-status': '0' };
const GRPC_JS_OK_HEADERS = { ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-accept-encoding': 'identity,deflate,gzip', 'grpc-encoding': 'identity' };
const GRPC_JS_OK_TRAILERS = { 'grpc-status': '0', 'grpc-message': 'OK' };

/** Both ports answered OK: the fast one as etcd does, the slow one as grpc-js does. */
function expectOkPair(a: { headers: Record<string, unknown>; trailers?: Record<string, unknown> }, b: typeof a): void {
  expect(a.headers).toEqual(OK_HEADERS);
  expect(b.headers).toEqual(GRPC_JS_OK_HEADERS);
  if (a.trailers || b.trailers) {
    expect(a.trailers).toEqual(OK_TRAILERS);
    expect(b.trailers).toEqual(GRPC_JS_OK_TRAILERS);
  }
}

async function call(endpoint: string, path: string, body: readonly Buffer[], extra: Record<string, string> = {}): Promise<Answer> {
  const session = connect(endpoint);
  try {
    return await new Promise<Answer>((resolve, reject) => {
      const stream = session.request({
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc',
        te: 'trailers',
        ...extra,
      });
      let headers: Record<string, unknown> = {};
      let trailers: Record<string, unknown> = {};
      const data: Buffer[] = [];
      stream.on('response', (h) => (headers = clean(h)));
      stream.on('trailers', (t) => (trailers = clean(t)));
      stream.on('data', (d: Buffer) => data.push(d));
      stream.on('error', reject);
      stream.on('close', () => resolve({ headers, trailers, data: Buffer.concat(data) }));
      for (const b of body) stream.write(b);
      stream.end();
    });
  } finally {
    session.close();
  }
}

/** The etcd services on plain grpc-js, every connection handed straight to it: what the client port must match. */
interface Reference {
  readonly endpoint: string;
  close(): Promise<void>;
}

async function startGrpcJsReference(maxRequestBytes: number): Promise<Reference> {
  const store = await SingleNodeStore.open({});
  const grpc = createEtcdGrpc({ store, logger: testLogger(), metrics: createMetrics({ processMetrics: false }), maxRequestBytes });
  const server = net.createServer((sock) => grpc.injectConnection(sock));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: async () => {
      const closed = new Promise((r) => server.close(r));
      await grpc.close();
      await closed;
      await store.close();
    },
  };
}

interface PortPair {
  /** The client port: its own HTTP/2 server and fast paths. */
  readonly fast: FixturePort;
  /** Everything through grpc-js. */
  readonly slow: Reference;
  /** The same call to both. */
  both(path: string, body: readonly Buffer[], extra?: Record<string, string>): Promise<[Answer, Answer]>;
}

/** The two client ports, started for the enclosing describe block and stopped after it. */
function portPair(): PortPair {
  let fast: FixturePort | undefined;
  let slow: Reference | undefined;
  beforeAll(async () => {
    fast = await startFixturePort({ maxRequestBytes: MAX_REQUEST_BYTES });
    slow = await startGrpcJsReference(MAX_REQUEST_BYTES);
  });
  afterAll(async () => {
    await fast?.close();
    await slow?.close();
  });
  const started = <P>(p: P | undefined): P => {
    if (!p) throw new Error('ports not started');
    return p;
  };
  return {
    get fast() {
      return started(fast);
    },
    get slow() {
      return started(slow);
    },
    both: (path, body, extra) => Promise.all([call(started(fast).endpoint, path, body, extra), call(started(slow).endpoint, path, body, extra)]),
  };
}

describe('the fast unary path answers as grpc-js does', () => {
  const ports = portPair();
  const both = ports.both;

  it('answers a put and a range with the same headers, one message and the same trailers', async () => {
    for (const [path, req] of [
      [PUT, { key: Buffer.from('k'), value: Buffer.from('v') }],
      [RANGE, { key: Buffer.from('k') }],
      [RANGE, { key: Buffer.from('missing'), serializable: true }],
    ] as const) {
      const [a, b] = await both(path, [frame(encode(path, req))], { 'grpc-timeout': '5S', hasleader: 'true' });
      expectOkPair(a, b);
      expect(a.data[0]).toBe(0);
      expect(a.data.readUInt32BE(1)).toBe(a.data.length - 5);
      // Same store contents, so the same body once the ids in the header are set aside.
      const m = Object.values(KV).find((d) => d.path === path);
      const strip = (x: Buffer): unknown => {
        const r = m?.responseDeserialize(x.subarray(5)) as { header?: object };
        return { ...r, header: undefined };
      };
      expect(strip(a.data)).toEqual(strip(b.data));
    }
  });

  it('gives etcd errors as a trailers-only response', async () => {
    const [a, b] = await both(PUT, [frame(encode(PUT, { key: Buffer.alloc(0), value: Buffer.from('v') }))]);
    expect(a).toEqual(b);
    expect(a.headers['grpc-status']).toBe(String(status.INVALID_ARGUMENT));
    expect(a.headers['grpc-message']).toBe(encodeURI('etcdserver: key is not provided'));
  });

  it('refuses what grpc-js refuses, with its statuses and messages', async () => {
    const good = frame(encode(RANGE, { key: Buffer.from('k') }));
    const tooBig = Buffer.alloc(5);
    tooBig.writeUInt32BE(MAX_REQUEST_BYTES + 512 * 1024 + 1, 1);
    const cases: [string, Buffer[], Record<string, string>?][] = [
      ['no message', []],
      ['half a message', [good.subarray(0, good.length - 1)]],
      ['two messages', [good, good]],
      ['a message over the limit', [tooBig, Buffer.alloc(100)]],
      ['bytes that are no RangeRequest', [frame(Buffer.from([0xff, 0xff, 0xff, 0xff]))]],
      ['an unreadable grpc-timeout', [good], { 'grpc-timeout': 'soon' }],
    ];
    for (const [what, body, extra] of cases) {
      const [a, b] = await both(RANGE, body, extra);
      expect(a, what).toEqual(b);
      expect(a.headers['grpc-status'], what).not.toBe('0');
    }
  });

  it('leaves compressed requests to grpc-js, and resets a request that is not gRPC as grpc-go (etcd) does', async () => {
    const msg = encode(PUT, { key: Buffer.from('z'), value: Buffer.from('zz') });
    const [a, b] = await both(PUT, [frame(gzipSync(msg), 1)], { 'grpc-encoding': 'gzip' });
    expect(a.trailers).toEqual(b.trailers);
    expect(a.trailers['grpc-status']).toBe('0');
    // Not gRPC: the client port resets it (RST_STREAM PROTOCOL_ERROR) as etcd's grpc-go does
    // (gateway-streams.test.ts compares with etcd 3.4); grpc-js alone would have answered 415.
    await expect(call(ports.fast.endpoint, PUT, [frame(msg)], { 'content-type': 'text/plain' })).rejects.toThrow(/NGHTTP2_PROTOCOL_ERROR/);
    expect((await call(ports.slow.endpoint, PUT, [frame(msg)], { 'content-type': 'text/plain' })).headers[':status']).toBe(415);
  });
});

// The bidi streams the client port's own HTTP/2 server runs itself (Watch, LeaseKeepAlive) answer as
// grpc-js does too: same headers, the same messages, the same trailers and refusals.
describe('the HTTP/2 server runs watch and keep-alive streams as grpc-js does', () => {
  const ports = portPair();
  const LEASE = etcdServiceDefinition('Lease');
  const WATCH = etcdServiceDefinition('Watch');
  const KEEPALIVE = '/etcdserverpb.Lease/LeaseKeepAlive';
  const GRANT = '/etcdserverpb.Lease/LeaseGrant';
  const WATCH_PATH = '/etcdserverpb.Watch/Watch';
  const codec = (path: string): (typeof LEASE)[string] => {
    const m = [...Object.values(LEASE), ...Object.values(WATCH)].find((d) => d.path === path);
    if (!m) throw new Error(path);
    return m;
  };
  /** The messages of a response body, decoded, with their headers (ids, revisions) set aside. */
  const messages = (path: string, data: Buffer): unknown[] => {
    const out: unknown[] = [];
    for (let at = 0; at < data.length; ) {
      const len = data.readUInt32BE(at + 1);
      const r = codec(path).responseDeserialize(data.subarray(at + 5, at + 5 + len)) as { header?: object };
      out.push({ ...r, header: undefined });
      at += 5 + len;
    }
    return out;
  };

  it('keeps a lease alive, answers an unknown one with TTL 0, and ends OK after the half-close', async () => {
    const grant = codec(GRANT);
    const ids: string[] = [];
    for (const port of [ports.fast, ports.slow]) {
      const a = await call(port.endpoint, GRANT, [frame(grant.requestSerialize({ ID: 7001, TTL: 60 }))]);
      ids.push(String((grant.responseDeserialize(a.data.subarray(5)) as { ID: string }).ID));
    }
    expect(ids).toEqual(['7001', '7001']);
    const body = [frame(codec(KEEPALIVE).requestSerialize({ ID: 7001 })), frame(codec(KEEPALIVE).requestSerialize({ ID: 7002 }))];
    const [a, b] = await ports.both(KEEPALIVE, body);
    expectOkPair(a, b);
    expect(messages(KEEPALIVE, a.data)).toEqual(messages(KEEPALIVE, b.data));
    expect(messages(KEEPALIVE, a.data)).toEqual([
      { ID: '7001', TTL: '60', header: undefined },
      { ID: '7002', TTL: '0', header: undefined },
    ]);
  });

  it('refuses what grpc-js refuses on a stream, with its statuses and messages', async () => {
    const tooBig = Buffer.alloc(5);
    tooBig.writeUInt32BE(MAX_REQUEST_BYTES + 512 * 1024 + 1, 1);
    const cases: [string, string, Buffer[]][] = [
      ['bytes that are no LeaseKeepAliveRequest', KEEPALIVE, [frame(Buffer.from([0xff, 0xff, 0xff, 0xff]))]],
      ['a watch request over the limit', WATCH_PATH, [tooBig, Buffer.alloc(100)]],
      ['bytes that are no WatchRequest', WATCH_PATH, [frame(Buffer.from([0x0a, 0x05, 0x01]))]],
    ];
    for (const [what, path, body] of cases) {
      const [a, b] = await ports.both(path, body);
      expect(a, what).toEqual(b);
      expect(a.headers['grpc-status'], what).not.toBe('0');
    }
  });

  it('creates a watch and delivers its events with the same headers and messages', async () => {
    const watch = codec(WATCH_PATH);
    const run = (endpoint: string): Promise<{ headers: Record<string, unknown>; data: Buffer }> =>
      new Promise((resolve, reject) => {
        const session = connect(endpoint);
        const stream = session.request({ ':method': 'POST', ':path': WATCH_PATH, 'content-type': 'application/grpc', te: 'trailers' });
        let headers: Record<string, unknown> = {};
        const data: Buffer[] = [];
        stream.on('response', (h) => (headers = clean(h)));
        stream.on('error', reject);
        stream.on('data', (d: Buffer) => {
          data.push(d);
          const all = Buffer.concat(data);
          if (messages(WATCH_PATH, all).length < 3) return;
          stream.close();
          session.close();
          resolve({ headers, data: all });
        });
        stream.write(frame(watch.requestSerialize({ createRequest: { key: Buffer.from('w'), rangeEnd: Buffer.from('x'), prevKv: true } })));
        stream.once('data', () => {
          // Both stores get the same two writes once their watch is in place.
          const put = (value: string): Promise<Answer> => call(endpoint, PUT, [frame(encode(PUT, { key: Buffer.from('w1'), value: Buffer.from(value) }))]);
          void put('a').then(() => put('b'));
        });
      });
    const [a, b] = await Promise.all([run(ports.fast.endpoint), run(ports.slow.endpoint)]);
    expectOkPair(a, b);
    const strip = (ms: unknown[]): unknown[] =>
      ms.map((m) => {
        const r = m as { events?: { kv?: object; prevKv?: object }[] };
        const kv = (x: object | undefined): unknown => x && { ...x, createRevision: undefined, modRevision: undefined };
        return { ...r, events: r.events?.map((e) => ({ ...e, kv: kv(e.kv), prevKv: kv(e.prevKv) })) };
      });
    expect(strip(messages(WATCH_PATH, a.data))).toEqual(strip(messages(WATCH_PATH, b.data)));
  });
});
