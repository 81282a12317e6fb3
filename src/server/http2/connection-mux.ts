// One port, two protocols, as etcd's cmux does it: read the first bytes of each connection (after TLS, if
// any) and hand connections that open with the HTTP/2 client preface to gRPC, the rest to HTTP/1.1.
// Both get the bytes read so far back with unshift() (Node's HTTP/2 session reads a socket's buffered
// bytes first). One more step for HTTP/2: Go clients that dial "passthrough:///http://host:port" send
// that whole URL as :authority, which Node's HTTP/2 server refuses, so the connection's first request
// is read before choosing (routeH2): a valid :authority gets the socket itself, an invalid one a relay
// that rewrites it in every request (http2/authority.ts) — correct, but every byte then crosses JS.
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { AuthorityFixer, fixAuthority, headerBlockBounds } from './authority.js';
import { F_ACK, FRAME_HEADER_LEN, HTTP2_PREFACE, T_HEADERS, T_PING, T_SETTINGS } from './frames.js';

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

/** An empty SETTINGS frame: a valid server connection preface, sent before Node's own. */
const EMPTY_SETTINGS = Buffer.from([0, 0, 0, T_SETTINGS, 0, 0, 0, 0, 0]);

/** What routeH2 hands on: the socket itself (with the bytes read put back), or a relaying stream. */
export interface H2Handoff {
  direct(sock: Socket): void;
  relay(conn: Duplex): void;
}

/**
 * Chooses how an HTTP/2 connection (`head` = the bytes read so far, starting with the preface) reaches
 * the gRPC server. Go clients wait for the server's SETTINGS before their first request, so an empty
 * SETTINGS frame goes out at once; the client's ACK of it is taken out of the bytes (Node's session
 * never sent it and would call the ACK a protocol error). Once that ACK and the first complete HEADERS
 * frame are in: direct hand-off if its :authority is valid, the relay if not (or if its headers span
 * CONTINUATION frames). A client may stay idle for long before its first request (a balancer's spare
 * connection): meanwhile its keepalive PINGs are answered here, so waiting costs it nothing.
 */
export function routeH2(sock: Socket, head: Buffer, to: H2Handoff): void {
  let buf = head;
  let scanned = HTTP2_PREFACE.length;
  let ackSeen = false;
  let headers: Buffer | undefined;
  let decided = false;
  const finish = (direct: boolean): void => {
    if (decided) return;
    decided = true;
    sock.removeListener('data', onData);
    sock.removeListener('error', onError);
    sock.pause();
    if (direct) {
      sock.unshift(buf);
      to.direct(sock);
    } else {
      to.relay(replayingH2Stream(sock, buf, !ackSeen));
    }
  };
  const scan = (): void => {
    while (scanned + FRAME_HEADER_LEN <= buf.length) {
      const len = buf.readUIntBE(scanned, 3);
      const end = scanned + FRAME_HEADER_LEN + len;
      if (end > buf.length) break;
      const type = buf[scanned + 3];
      const flags = buf[scanned + 4] as number;
      if (!ackSeen && type === T_SETTINGS && (flags & F_ACK) !== 0 && len === 0) {
        ackSeen = true;
        buf = Buffer.concat([buf.subarray(0, scanned), buf.subarray(end)]);
        continue;
      }
      if (type === T_PING && (flags & F_ACK) === 0 && len === 8) {
        const ack = Buffer.from(buf.subarray(scanned, end));
        ack[4] = F_ACK;
        sock.write(ack);
        buf = Buffer.concat([buf.subarray(0, scanned), buf.subarray(end)]);
        continue;
      }
      if (type === T_HEADERS && !headers) headers = buf.subarray(scanned, end);
      scanned = end;
    }
    if (!headers) return;
    const bounds = headerBlockBounds(headers);
    if (!bounds) return finish(false);
    if (ackSeen) finish(fixAuthority(headers.subarray(bounds.start, bounds.end)) === undefined);
  };
  const onData = (chunk: Buffer): void => {
    buf = Buffer.concat([buf, chunk]);
    scan();
  };
  const onError = (): void => {
    sock.destroy();
  };
  sock.on('data', onData);
  sock.on('error', onError);
  sock.write(EMPTY_SETTINGS);
  scan();
  if (!decided) sock.resume();
}

/**
 * A stream over an HTTP/2 connection that first yields `head`, then whatever `sock` reads (both through
 * the :authority fix, which also drops the client's ACK of routeH2's SETTINGS if it is still to come),
 * with backpressure both ways. Closing either side closes the other.
 */
export function replayingH2Stream(sock: Socket, head: Buffer, dropSettingsAck = false): Duplex {
  const fixer = new AuthorityFixer(dropSettingsAck);
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
    // HTTP/2 hands over many frames at once (corked): one socket write for all of them.
    writev(chunks: { chunk: Buffer }[], callback) {
      sock.cork();
      for (let i = 0; i < chunks.length - 1; i++) sock.write((chunks[i] as { chunk: Buffer }).chunk);
      sock.write((chunks[chunks.length - 1] as { chunk: Buffer }).chunk, (err) => callback(err ?? null));
      sock.uncork();
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
