// One port, two protocols, as etcd's cmux does it: read the first bytes of each connection (after TLS, if
// any) and hand connections that open with the HTTP/2 client preface to gRPC, the rest to HTTP/1.1.
// Node's HTTP/1 parser picks up bytes put back with unshift(); its HTTP/2 session reads the socket's
// handle directly and would miss them, so gRPC gets a stream that replays the bytes read, then relays
// (passing the client's bytes through the :authority fix that Go clients need, h2-authority.ts).
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { AuthorityFixer } from './h2-authority.js';

/** The HTTP/2 client connection preface (RFC 9113 §3.4). */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export type Protocol = 'h2' | 'http1';

/**
 * Reads from `sock` until its protocol is known — the preface complete, or a byte that departs from it —
 * then calls `route` with the bytes read (`head`), which the receiver must see first. A connection
 * that closes before deciding is dropped.
 */
export function sniff(sock: Socket, route: (protocol: Protocol, head: Buffer) => void): void {
  let head: Buffer = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
    const n = Math.min(head.length, HTTP2_PREFACE.length);
    const isPreface = head.subarray(0, n).equals(HTTP2_PREFACE.subarray(0, n));
    if (isPreface && head.length < HTTP2_PREFACE.length) return;
    sock.removeListener('data', onData);
    sock.removeListener('error', onError);
    sock.pause();
    route(isPreface ? 'h2' : 'http1', head);
  };
  // Errors before routing (a reset during the first bytes) only end this connection.
  const onError = (): void => {
    sock.destroy();
  };
  sock.on('data', onData);
  sock.on('error', onError);
}

/** Hands an HTTP/1 connection on: the bytes read go back into the socket for the parser to read. */
export function replayIntoSocket(sock: Socket, head: Buffer): void {
  sock.unshift(head);
}

/**
 * A stream over an HTTP/2 connection that first yields `head`, then whatever `sock` reads (both through
 * the :authority fix), with backpressure both ways. Closing either side closes the other.
 */
export function replayingH2Stream(sock: Socket, head: Buffer): Duplex {
  const fixer = new AuthorityFixer();
  let flowing = true;
  const push = (chunk: Buffer): void => {
    for (const b of fixer.push(chunk)) flowing = stream.push(b) && flowing;
  };
  const stream = new Duplex({
    read() {
      sock.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      sock.write(chunk, (err) => callback(err ?? null));
    },
    final(callback) {
      sock.end();
      callback();
    },
    destroy(err, callback) {
      sock.destroy();
      callback(err);
    },
  });
  push(head);
  sock.on('data', (chunk: Buffer) => {
    flowing = true;
    push(chunk);
    if (!flowing) sock.pause();
  });
  sock.on('end', () => stream.push(null));
  sock.on('error', (err) => stream.destroy(err));
  sock.on('close', () => stream.destroy());
  return stream;
}
