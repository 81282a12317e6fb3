// The fast unary path (src/server/grpc-fast-unary.ts) answers exactly as grpc-js does. The same raw HTTP/2
// requests — good ones and every malformed kind the fast path handles itself or hands back — go to a
// client port with the fast path and to one without, and the answers must match header for header.
import { status } from '@grpc/grpc-js';
import { connect } from 'node:http2';
import type { IncomingHttpHeaders } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdServiceDefinition } from '../../src/server/etcd-proto.js';
import type { FixturePort } from './helpers/client-port-harness.js';
import { startFixturePort } from './helpers/client-port-harness.js';

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

describe('the fast unary path answers as grpc-js does', () => {
  let fast: FixturePort;
  let slow: FixturePort;

  beforeAll(async () => {
    fast = await startFixturePort({ maxRequestBytes: MAX_REQUEST_BYTES });
    slow = await startFixturePort({ maxRequestBytes: MAX_REQUEST_BYTES, fastUnary: false });
  });

  afterAll(async () => {
    await fast?.close();
    await slow?.close();
  });

  const both = async (path: string, body: readonly Buffer[], extra?: Record<string, string>): Promise<[Answer, Answer]> =>
    Promise.all([call(fast.endpoint, path, body, extra), call(slow.endpoint, path, body, extra)]);

  it('is installed on the grpc-js this project uses', () => {
    // If a grpc-js upgrade changes the internals it relies on, KV calls quietly take the slow path: catch that here.
    expect(fast.port.fastUnary).toBe(true);
    expect(slow.port.fastUnary).toBe(false);
  });

  it('answers a put and a range with the same headers, one message and the same trailers', async () => {
    for (const [path, req] of [
      [PUT, { key: Buffer.from('k'), value: Buffer.from('v') }],
      [RANGE, { key: Buffer.from('k') }],
      [RANGE, { key: Buffer.from('missing'), serializable: true }],
    ] as const) {
      const [a, b] = await both(path, [frame(encode(path, req))], { 'grpc-timeout': '5S', hasleader: 'true' });
      expect(a.headers).toEqual(b.headers);
      expect(a.trailers).toEqual(b.trailers);
      expect(a.trailers['grpc-status']).toBe('0');
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

  it('leaves compressed requests and other content types to grpc-js', async () => {
    const msg = encode(PUT, { key: Buffer.from('z'), value: Buffer.from('zz') });
    const [a, b] = await both(PUT, [frame(gzipSync(msg), 1)], { 'grpc-encoding': 'gzip' });
    expect(a.trailers).toEqual(b.trailers);
    expect(a.trailers['grpc-status']).toBe('0');
    const [c, d] = await both(PUT, [frame(msg)], { 'content-type': 'text/plain' });
    expect(c).toEqual(d);
    expect(c.headers[':status']).toBe(415);
  });
});
