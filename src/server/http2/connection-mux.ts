// One port, two protocols, as etcd's cmux does it: read the first bytes of each connection (after TLS, if
// any) and hand connections that open with the HTTP/2 client preface to the port's HTTP/2 server, the
// rest to HTTP/1.1 with the bytes read so far put back.
import type { Socket } from 'node:net';
import { HTTP2_PREFACE } from './frames.js';

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
