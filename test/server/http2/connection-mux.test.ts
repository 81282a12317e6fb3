// sniff(): one port for HTTP/2 and HTTP/1.1, as etcd's cmux does it. A connection that opens with the
// HTTP/2 preface (however its bytes are split) goes to HTTP/2 with every byte read so far; one that
// departs from the preface at any byte goes to HTTP/1.1, its bytes put back for the parser.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { replayIntoSocket, sniff } from '../../../src/server/http2/connection-mux.js';
import type { Protocol } from '../../../src/server/http2/connection-mux.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const servers: net.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A server that sniffs each connection, then (for HTTP/1) echoes what the socket reads after replay. */
async function routed(send: readonly Buffer[]): Promise<{ protocol: Protocol; head: Buffer; replayed?: Buffer }> {
  let settle: (v: { protocol: Protocol; head: Buffer; replayed?: Buffer }) => void = () => undefined;
  const result = new Promise<{ protocol: Protocol; head: Buffer; replayed?: Buffer }>((r) => (settle = r));
  const server = net.createServer((sock) => {
    sniff(sock, (protocol, head) => {
      if (protocol === 'h2') {
        settle({ protocol, head });
        sock.destroy();
        return;
      }
      replayIntoSocket(sock, head);
      sock.once('data', (d: Buffer) => {
        settle({ protocol, head, replayed: d });
        sock.destroy();
      });
      sock.resume();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const c = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  c.on('error', () => undefined);
  await new Promise((r) => c.once('connect', r));
  for (const b of send) {
    c.write(b);
    await new Promise((r) => setImmediate(r));
  }
  const got = await result;
  c.destroy();
  return got;
}

describe('sniff', () => {
  it('routes the HTTP/2 preface to HTTP/2 with the bytes read, even one byte at a time', async () => {
    const settings = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
    const whole = await routed([Buffer.concat([PREFACE, settings])]);
    expect(whole.protocol).toBe('h2');
    expect(whole.head.equals(Buffer.concat([PREFACE, settings]))).toBe(true);
    const split = await routed([...PREFACE].map((b) => Buffer.from([b])));
    expect(split.protocol).toBe('h2');
    expect(split.head.equals(PREFACE)).toBe(true);
  });

  it('routes anything else to HTTP/1.1 with its bytes put back, also when it departs from the preface late', async () => {
    const get = await routed([Buffer.from('GET /health HTTP/1.1\r\n\r\n')]);
    expect(get.protocol).toBe('http1');
    expect(get.replayed?.toString()).toBe('GET /health HTTP/1.1\r\n\r\n');
    const late = await routed([Buffer.from('PRI * HTTP/1.1\r\n')]);
    expect(late.protocol).toBe('http1');
    expect(late.replayed?.toString()).toBe('PRI * HTTP/1.1\r\n');
  });
});
