// routeH2: a client whose first request carries a valid :authority gets the socket handed straight to
// Node's HTTP/2 server; one with a Go-style "http://host:port" authority gets the rewriting relay — and
// in every case the request is served (Node's session never sees the ACK of the SETTINGS frame routeH2
// sent on its behalf). An idle client's PINGs are answered while it waits.
import http2 from 'node:http2';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { routeH2, sniff } from '../../../src/server/http2/connection-mux.js';

interface Fixture {
  readonly url: string;
  readonly routes: string[];
  close(): Promise<void>;
}

const open: Fixture[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((f) => f.close()));
});

async function fixture(): Promise<Fixture> {
  const h2 = http2.createServer();
  h2.on('stream', (stream, headers) => {
    stream.respond({ ':status': 200 });
    stream.end(String(headers[':authority']));
  });
  const routes: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sniff(sock, (protocol, head) => {
      expect(protocol).toBe('h2');
      routeH2(sock, head, {
        direct: (s) => {
          routes.push('direct');
          h2.emit('connection', s);
        },
        relay: (conn) => {
          routes.push('relay');
          h2.emit('connection', conn);
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const f: Fixture = {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    routes,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
      h2.close();
    },
  };
  open.push(f);
  return f;
}

function get(session: http2.ClientHttp2Session, authority?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':path': '/', ...(authority ? { ':authority': authority } : {}) });
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

describe('routeH2', () => {
  it('hands a connection whose first request has a valid :authority straight to the server', async () => {
    const f = await fixture();
    const session = http2.connect(f.url);
    try {
      expect(await get(session)).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(await get(session)).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(f.routes).toEqual(['direct']);
    } finally {
      session.close();
    }
  });

  it('relays a connection whose :authority is a URL, rewriting it so the server accepts every request', async () => {
    const f = await fixture();
    const session = http2.connect(f.url);
    try {
      expect(await get(session, 'http://127.0.0.1:2379')).toBe('http:__127.0.0.1:2379');
      expect(await get(session, 'http://127.0.0.1:2379')).toBe('http:__127.0.0.1:2379');
      expect(f.routes).toEqual(['relay']);
    } finally {
      session.close();
    }
  });

  it("waits for an idle client's first request, answering its PINGs meanwhile, then hands it over directly", async () => {
    const f = await fixture();
    const session = http2.connect(f.url);
    try {
      await new Promise((r) => session.once('remoteSettings', r));
      const rtt = await new Promise<number>((resolve, reject) => session.ping((err, ms) => (err ? reject(err) : resolve(ms))));
      expect(rtt).toBeGreaterThanOrEqual(0);
      expect(f.routes).toEqual([]);
      expect(await get(session)).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(f.routes).toEqual(['direct']);
    } finally {
      session.close();
    }
  });
});
