// What a hostile or broken client can cost the API server, and that the server keeps serving others
// meanwhile: body size (413), slow bodies and slow handlers (504), the in-flight limits (429 with
// Retry-After: 1, as Kubernetes' filter answers), header size, slow and malformed requests, garbage on
// the wire, many idle connections, and the HTTP/2 stream cap.
import net from 'node:net';
import tls from 'node:tls';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiRequest } from '../../src/apiserver/handler.js';
import { h1, h2, h2connect, json, type Reply } from './helpers/clients.js';
import { echoHandler, handlerOf } from './helpers/fixtures.js';
import { startTestServer, TOKEN, type TestServer } from './helpers/test-server.js';

const untilAborted = (req: ApiRequest): Promise<void> =>
  new Promise((resolve) => {
    if (req.signal.aborted) resolve();
    else req.signal.addEventListener('abort', () => resolve(), { once: true });
  });

/** A TLS connection speaking raw bytes (HTTP/1.1 unless told otherwise), with what the server sent and when it closed. */
function rawTls(ts: TestServer, alpn?: string[]): Promise<{ socket: tls.TLSSocket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    let data = '';
    const socket = tls.connect({ host: '127.0.0.1', port: ts.port, ca: ts.ca.certPem, cert: ts.admin.certPem, key: ts.admin.keyPem, ...(alpn ? { ALPNProtocols: alpn } : {}) }, () =>
      resolve({ socket, received: () => data, closed }),
    );
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('data', (c: Buffer) => (data += c.toString('latin1')));
    socket.on('error', () => {});
    socket.once('error', reject);
  });
}

const probe = (ts: TestServer): Promise<Reply> => h1(ts.port, ts.ca.certPem, { path: '/readyz' });

describe('request bodies', () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer({ config: { maxRequestBodyBytes: 1024, bodyIdleTimeoutMs: 300 } });
  });
  afterAll(async () => {
    await ts?.stop();
  });
  const TOO_LARGE = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Request entity too large: limit is 1024', reason: 'RequestEntityTooLarge', code: 413 };

  it('a declared length over the limit is refused before a byte is read, and the connection closed', async () => {
    const r = await h1(ts.port, ts.ca.certPem, { method: 'POST', path: '/api/v1/namespaces/a/pods', cert: ts.admin, body: 'x'.repeat(5000) });
    expect(r.status).toBe(413);
    expect(json(r)).toEqual(TOO_LARGE);
    expect(r.headers.connection).toBe('close');
    expect((await probe(ts)).status).toBe(200);
  });

  it('a chunked body that grows past the limit, on HTTP/1.1 and HTTP/2', async () => {
    const r = await new Promise<Reply>((resolve, reject) => {
      const req = https.request(
        { host: '127.0.0.1', port: ts.port, method: 'POST', path: '/api/v1/namespaces/a/pods', ca: ts.ca.certPem, cert: ts.admin.certPem, key: ts.admin.keyPem, agent: false },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      // Keep sending: the server must answer without reading it all.
      let sent = 0;
      const pump = (): void => {
        while (sent < 10 * 1024 * 1024 && req.write('y'.repeat(4096))) sent += 4096;
        if (sent < 10 * 1024 * 1024 && !req.destroyed) req.once('drain', pump);
      };
      pump();
    });
    expect(r.status).toBe(413);
    expect(json(r)).toEqual(TOO_LARGE);

    const s = await h2connect(ts.port, ts.ca.certPem, ts.admin);
    try {
      const r2 = await h2(s, { method: 'POST', path: '/api/v1/namespaces/a/pods', body: 'z'.repeat(4096) });
      expect(r2.status).toBe(413);
      // The session survives the refused upload.
      expect((await h2(s, { path: '/api/v1/namespaces/a/pods/x' })).status).toBe(200);
    } finally {
      s.close();
    }
  });

  it('a body that stops arriving is answered 504 and its connection closed', async () => {
    const c = await rawTls(ts);
    c.socket.write('POST /api/v1/namespaces/a/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"kind":');
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 504 /);
    expect(c.received()).toContain('"message":"Timeout: request did not complete within requested timeout - the request body stopped arriving"');
    expect((await probe(ts)).status).toBe(200);
  });
});

describe('timeouts', () => {
  let ts: TestServer;
  let aborted = 0;
  beforeAll(async () => {
    ts = await startTestServer({
      config: { requestTimeoutMs: 800 },
      handler: handlerOf(async (req) => {
        await untilAborted(req);
        aborted++;
      }),
    });
  });
  afterAll(async () => {
    await ts?.stop();
  });

  it('a request past --request-timeout is answered 504 as Kubernetes words it, and its handler is told', async () => {
    const before = aborted;
    const r = await h1(ts.port, ts.ca.certPem, { path: '/api/v1/namespaces/a/pods/x', cert: ts.admin });
    expect(r.status).toBe(504);
    expect(json(r)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Timeout: request did not complete within requested timeout - context deadline exceeded',
      reason: 'Timeout',
      details: {},
      code: 504,
    });
    await expect.poll(() => aborted).toBe(before + 1);
  });

  it('?timeout= shortens it (never lengthens it); a bad one is 400 with Go\'s words', async () => {
    const t0 = Date.now();
    expect((await h1(ts.port, ts.ca.certPem, { path: '/api/v1/namespaces/a/pods/x?timeout=100ms', cert: ts.admin })).status).toBe(504);
    const short = Date.now() - t0;
    const t1 = Date.now();
    expect((await h1(ts.port, ts.ca.certPem, { path: '/api/v1/namespaces/a/pods/x?timeout=10m', cert: ts.admin })).status).toBe(504);
    // The 10m request waited for the server's own 800 ms: more than the 100 ms one.
    expect(Date.now() - t1).toBeGreaterThan(short);
    const bad = await h1(ts.port, ts.ca.certPem, { path: '/api/v1/namespaces/a/pods/x?timeout=abc', cert: ts.admin });
    expect(bad.status).toBe(400);
    expect(json(bad)).toMatchObject({ reason: 'BadRequest', message: 'invalid timeout specified in the request URL - time: invalid duration "abc"' });
  });
});

describe('max in flight', () => {
  let ts: TestServer;
  let open: () => void = () => {};
  let gate = Promise.resolve();
  let entered = 0;
  const closeGate = (): void => {
    gate = new Promise<void>((r) => (open = r));
  };
  beforeAll(async () => {
    ts = await startTestServer({
      config: { maxRequestsInflight: 2, maxMutatingRequestsInflight: 1 },
      handler: handlerOf(async (req, res) => {
        entered++;
        if (req.query.get('hold') === '1') await gate;
        await echoHandler.serve(req, res);
      }),
    });
  });
  afterAll(async () => {
    open();
    await ts?.stop();
  });

  it('the next read-only request past the limit gets 429 and Retry-After: 1; mutations, masters and probes are apart', async () => {
    closeGate();
    const before = entered;
    const held = [1, 2].map(() => h1(ts.port, ts.ca.certPem, { path: '/api/v1/pods?hold=1', token: TOKEN }));
    await expect.poll(() => entered).toBe(before + 2);
    const refused = await h1(ts.port, ts.ca.certPem, { path: '/api/v1/pods', token: TOKEN });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(refused.body).toBe('Too many requests, please try again later.\n');
    // Mutations have their own limit.
    expect((await h1(ts.port, ts.ca.certPem, { method: 'POST', path: '/api/v1/namespaces/a/pods', token: TOKEN, body: '{}' })).status).toBe(201);
    // system:masters is never refused; health probes are not counted.
    expect((await h1(ts.port, ts.ca.certPem, { path: '/api/v1/pods', cert: ts.admin })).status).toBe(200);
    expect((await probe(ts)).status).toBe(200);
    open();
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200]);
    expect((await h1(ts.port, ts.ca.certPem, { path: '/api/v1/pods', token: TOKEN })).status).toBe(200);
  });

  it('the mutating limit, alike', async () => {
    closeGate();
    const before = entered;
    const held = h1(ts.port, ts.ca.certPem, { method: 'POST', path: '/api/v1/namespaces/a/pods?hold=1', token: TOKEN, body: '{}' });
    await expect.poll(() => entered).toBe(before + 1);
    const refused = await h1(ts.port, ts.ca.certPem, { method: 'DELETE', path: '/api/v1/namespaces/a/pods/x', token: TOKEN });
    expect(refused.status).toBe(429);
    expect((await h1(ts.port, ts.ca.certPem, { path: '/api/v1/pods', token: TOKEN })).status).toBe(200);
    open();
    expect((await held).status).toBe(201);
  });
});

describe('the wire', () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer({ config: { headersTimeoutMs: 1000, handshakeTimeoutMs: 1000, idleTimeoutMs: 1500, http2MaxStreamsPerConnection: 8 } });
  });
  afterAll(async () => {
    await ts?.stop();
  });

  it('headers over 64 KiB: the HTTP/1.1 connection ends (431, or reset with the upload unread), the HTTP/2 stream is refused; others are unaffected', async () => {
    const big = 'a'.repeat(70 * 1024);
    const r = await h1(ts.port, ts.ca.certPem, { path: '/readyz', headers: { 'x-big': big } }).then(
      (x) => x.status,
      (e: Error) => e.message,
    );
    expect(String(r)).toMatch(/^(431|socket hang up|.*ECONNRESET.*)$/);
    const s = await h2connect(ts.port, ts.ca.certPem, ts.admin);
    try {
      const failed = await h2(s, { path: '/readyz', headers: { 'x-big': big } }).then(
        (x) => String(x.status),
        (e: Error) => e.message,
      );
      expect(failed).toContain('NGHTTP2_REFUSED_STREAM');
    } finally {
      s.destroy();
    }
    expect((await probe(ts)).status).toBe(200);
  });

  it('malformed HTTP/1.1 gets 400 and a closed connection', async () => {
    const c = await rawTls(ts);
    c.socket.write('THIS IS NOT HTTP\r\n\r\n');
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect((await probe(ts)).status).toBe(200);
  });

  it('garbage on an HTTP/2 connection and plain text on the TLS port close only those connections', async () => {
    const c = await rawTls(ts, ['h2']);
    expect(c.socket.alpnProtocol).toBe('h2');
    c.socket.write(Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)));
    await c.closed;
    const plain = net.connect(ts.port, '127.0.0.1');
    plain.on('error', () => {});
    plain.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise<void>((r) => plain.once('close', () => r()));
    expect((await probe(ts)).status).toBe(200);
  });

  it('a request whose headers never finish is cut off', async () => {
    const c = await rawTls(ts);
    c.socket.write('GET /api/v1/pods HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    await c.closed;
    expect((await probe(ts)).status).toBe(200);
  });

  it('many idle connections: others are served meanwhile, and those that never finish a handshake are closed', async () => {
    const idle = Array.from({ length: 300 }, () => {
      const s = net.connect(ts.port, '127.0.0.1');
      s.on('error', () => {});
      return { s, closed: new Promise<void>((r) => s.once('close', () => r())) };
    });
    expect((await h1(ts.port, ts.ca.certPem, { path: '/api/v1/pods', cert: ts.admin })).status).toBe(200);
    await Promise.all(idle.map((i) => i.closed));
  });

  it('an idle keep-alive connection and an idle HTTP/2 session are closed; a quiet one with a stream open is not', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets = new Set<net.Socket>();
      const r = await new Promise<number>((resolve, reject) => {
        const req = https.get({ host: '127.0.0.1', port: ts.port, path: '/readyz', ca: ts.ca.certPem, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('socket', (s) => sockets.add(s));
        req.on('error', reject);
      });
      expect(r).toBe(200);
      await Promise.all([...sockets].map((s) => new Promise<void>((res) => (s.destroyed ? res() : s.once('close', () => res())))));
    } finally {
      agent.destroy();
    }
    const idle = await h2connect(ts.port, ts.ca.certPem, ts.admin);
    await new Promise<void>((r) => idle.once('close', () => r()));

    const busy = await h2connect(ts.port, ts.ca.certPem, ts.admin);
    try {
      const watch = busy.request({ ':path': '/api/v1/pods?watch=true' });
      watch.on('error', () => {});
      await new Promise<void>((r) => watch.once('response', () => r()));
      // Longer than the idle timeout, with nothing sent either way: the watch is still open.
      await new Promise((r) => setTimeout(r, 2500));
      expect(busy.closed || busy.destroyed).toBe(false);
      expect(watch.closed).toBe(false);
      watch.close();
    } finally {
      busy.destroy();
    }
  });

  it('HTTP/2 grants --http2-max-streams-per-connection streams; more are refused, other connections unaffected', async () => {
    const s = await h2connect(ts.port, ts.ca.certPem, ts.admin);
    try {
      await new Promise<void>((r) => (s.remoteSettings.maxConcurrentStreams === 8 ? r() : s.once('remoteSettings', () => r())));
      expect(s.remoteSettings.maxConcurrentStreams).toBe(8);
      const watches = Array.from({ length: 8 }, () => {
        const w = s.request({ ':path': '/api/v1/pods?watch=true' });
        w.on('error', () => {});
        return new Promise<void>((r) => w.once('response', () => r()));
      });
      await Promise.all(watches);
      // The ninth goes past what the server granted: nghttp2 refuses it (or the client holds it back).
      const ninth = s.request({ ':path': '/readyz' });
      const outcome = await Promise.race([
        new Promise<string>((r) => ninth.once('response', () => r('answered'))),
        new Promise<string>((r) => ninth.once('error', () => r('refused'))),
        new Promise<string>((r) => ninth.once('close', () => r('refused'))),
        new Promise<string>((r) => setTimeout(() => r('held'), 1000)),
      ]);
      expect(outcome).not.toBe('answered');
      const other = await h2connect(ts.port, ts.ca.certPem, ts.admin);
      expect((await h2(other, { path: '/readyz' })).status).toBe(200);
      other.close();
    } finally {
      s.destroy();
    }
  });

  it('a flood of unauthenticated requests from many connections: each refused, the server still answers', async () => {
    const sessions = await Promise.all(Array.from({ length: 20 }, () => h2connect(ts.port, ts.ca.certPem)));
    try {
      const replies = await Promise.all(sessions.flatMap((s) => Array.from({ length: 8 }, () => h2(s, { path: '/api/v1/pods', token: 'wrong' }))));
      expect(new Set(replies.map((r) => r.status))).toEqual(new Set([401]));
    } finally {
      for (const s of sessions) s.destroy();
    }
    expect((await h1(ts.port, ts.ca.certPem, { path: '/api/v1/pods', cert: ts.admin })).status).toBe(200);
  });
});
