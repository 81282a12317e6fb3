// Watch responses through the shell: one JSON event and a newline per frame, delivered as they are sent
// (chunked on HTTP/1.1, DATA frames on HTTP/2) rather than at the end; a length chosen as Kubernetes
// chooses it (timeoutSeconds, else --min-request-timeout × [1, 2)); not counted against the in-flight
// limit; ended cleanly when the server stops; and a client that stops reading is cut off rather than
// buffered without bound.
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiRequest } from '../../src/apiserver/handler.js';
import { h1, h2connect } from './helpers/clients.js';
import { handlerOf } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});
async function server(opts: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const s = await startTestServer(opts);
  servers.push(s);
  return s;
}

/** An HTTP/1.1 response read line by line as it arrives. */
function openWatch(ts: TestServer, path: string): Promise<{ res: IncomingMessage; lines: string[]; next(n: number): Promise<string[]>; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port: ts.port, path, ca: ts.ca.certPem, cert: ts.admin.certPem, key: ts.admin.keyPem, agent: false }, (res) => {
      const lines: string[] = [];
      let buf = '';
      const waiters: (() => void)[] = [];
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        buf += c;
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          lines.push(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
        for (const w of waiters.splice(0)) w();
      });
      const ended = new Promise<void>((r, j) => {
        res.on('end', () => r());
        res.on('error', j);
      });
      const next = async (n: number): Promise<string[]> => {
        while (lines.length < n) await new Promise<void>((r) => waiters.push(r));
        return lines.slice(0, n);
      };
      resolve({ res, lines, next, ended });
    });
    req.on('error', reject);
  });
}

const untilAborted = (req: ApiRequest): Promise<void> =>
  new Promise((resolve) => {
    if (req.signal.aborted) resolve();
    else req.signal.addEventListener('abort', () => resolve(), { once: true });
  });

describe('watch', () => {
  it('HTTP/1.1: chunked, each event a line, delivered while the watch is open', async () => {
    const ts = await server();
    const w = await openWatch(ts, '/api/v1/namespaces/default/pods?watch=true&events=3');
    expect(w.res.statusCode).toBe(200);
    expect(w.res.headers['transfer-encoding']).toBe('chunked');
    expect(w.res.headers['content-type']).toBe('application/json');
    const lines = await w.next(3);
    expect(lines.map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } }).map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'o0'],
      ['ADDED', 'o1'],
      ['ADDED', 'o2'],
    ]);
    w.res.destroy();
  });

  it('HTTP/2: the same frames on a stream', async () => {
    const ts = await server();
    const s = await h2connect(ts.port, ts.ca.certPem, ts.admin);
    try {
      const stream = s.request({ ':path': '/api/v1/watch/namespaces/default/pods?events=2' });
      const got = await new Promise<{ status: number; lines: string[] }>((resolve, reject) => {
        let status = 0;
        let buf = '';
        stream.on('response', (h) => (status = Number(h[':status'])));
        stream.setEncoding('utf8');
        stream.on('data', (c: string) => {
          buf += c;
          const lines = buf.split('\n').filter((l) => l !== '');
          if (lines.length >= 2) resolve({ status, lines });
        });
        stream.on('error', reject);
      });
      expect(got.status).toBe(200);
      expect(got.lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['ADDED', 'ADDED']);
      stream.close();
    } finally {
      s.close();
    }
  });

  it('timeoutSeconds ends the watch with a clean end of stream; the handler learns of it', async () => {
    let handlerSawEnd = false;
    const ts = await server({
      handler: handlerOf(async (req, res) => {
        const w = res.watch();
        await w.send({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '5' } } });
        await untilAborted(req);
        handlerSawEnd = true;
      }),
    });
    const w = await openWatch(ts, '/api/v1/pods?watch=1&timeoutSeconds=1');
    await w.next(1);
    await w.ended;
    expect(w.lines).toHaveLength(1);
    await expect.poll(() => handlerSawEnd).toBe(true);
  });

  it('without timeoutSeconds a watch lasts --min-request-timeout × (1 + random)', async () => {
    const seen: (number | undefined)[] = [];
    const handler = handlerOf(async (req, res) => {
      seen.push(req.watchTimeoutMs);
      res.watch();
      await untilAborted(req);
    });
    const ts = await server({ handler, config: { minRequestTimeoutSeconds: 1 }, deps: { random: () => 0.25 } });
    const started = Date.now();
    const w = await openWatch(ts, '/api/v1/pods?watch=true');
    await w.ended;
    expect(seen).toEqual([1250]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1200);
    // A named timeout wins, and non-watch requests have none.
    const w2 = await openWatch(ts, '/api/v1/pods?watch=true&timeoutSeconds=1');
    await w2.ended;
    expect(seen[1]).toBe(1000);
  });

  it('watches are not counted against --max-requests-inflight', async () => {
    const ts = await server({ config: { maxRequestsInflight: 1 } });
    const watches = await Promise.all([1, 2, 3].map(() => openWatch(ts, '/api/v1/pods?watch=true&events=1')));
    for (const w of watches) await w.next(1);
    const r = await h1(ts.port, ts.ca.certPem, { path: '/api/v1/pods', token: 'bob-token-0123456789' });
    expect(r.status).toBe(200);
    for (const w of watches) w.res.destroy();
  });

  it('stopping the server ends open watches cleanly and promptly', async () => {
    const ts = await startTestServer();
    const w = await openWatch(ts, '/api/v1/pods?watch=true&events=1');
    await w.next(1);
    const t0 = Date.now();
    await ts.stop();
    await w.ended;
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('a client that stops reading is cut off after the stall timeout, with bounded buffering', async () => {
    let written = 0;
    let ended = false;
    const chunk = JSON.stringify({ type: 'ADDED', object: { pad: 'x'.repeat(64 * 1024) } }) + '\n';
    const ts = await server({
      config: { streamStallTimeoutMs: 300 },
      handler: handlerOf(async (req, res) => {
        const w = res.watch();
        while (!req.signal.aborted && written < 1024 * 1024 * 1024) {
          await w.send({ type: 'ADDED', object: { pad: 'x'.repeat(64 * 1024) } });
          written += chunk.length;
        }
        ended = true;
      }),
    });
    const w = await openWatch(ts, '/api/v1/pods?watch=true');
    w.res.pause();
    await expect.poll(() => ended, { timeout: 20_000 }).toBe(true);
    // What the socket and Node took before the writer had to wait: the kernel's buffers, not the heap.
    expect(written).toBeLessThan(64 * 1024 * 1024);
    // And the server serves others.
    expect((await h1(ts.port, ts.ca.certPem, { path: '/readyz' })).status).toBe(200);
    w.res.destroy();
  });
});
