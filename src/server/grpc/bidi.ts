// A bidirectional streaming call between the transport that carries it (grpc-js's call object, or the
// client port's own HTTP/2 server, grpc/front.ts) and the handler core that runs it (v3rpc/edge.ts
// bidi()): what each tells the other.
import type { IncomingHttpHeaders } from 'node:http2';
import type { WireStatus } from './wire-status.js';

/**
 * A response the handler can write straight into the transport's outgoing bytes, so that a stream sending
 * many small responses (a watch with 1000 watchers) makes no buffer per response. Used at once: the
 * transport calls writeTo() before writeEncoded() returns.
 */
export interface EncodedMessage {
  readonly length: number;
  /** Writes the message's `length` bytes from buf[at]. */
  writeTo(buf: Buffer, at: number): void;
}

/** The message's bytes in a buffer of their own, for a transport that cannot take them in place. */
export function materialize(m: EncodedMessage): Buffer {
  const b = Buffer.allocUnsafe(m.length);
  m.writeTo(b, 0);
  return b;
}

/** The transport side of one bidi call. */
export interface BidiTransport {
  /** Sends one response; false when the client is behind (room() follows when it can take more). */
  write(res: unknown): boolean;
  /** write() of an encoded message, written in place where the transport can (else it is materialized). */
  writeEncoded?(m: EncodedMessage): boolean;
  /** Ends the call with trailers carrying this status (OK included). */
  end(s: WireStatus): void;
}

/** What a transport tells one bidi call. */
export interface BidiCall {
  /** A decoded request message. */
  request(req: unknown): void;
  /** The client half-closed its side. */
  halfClose(): void;
  /** The client cancelled (reset the stream, or its connection is gone). */
  cancel(): void;
  /** The client can take more after write() returned false. */
  room(): void;
}

/** A bidi handler's core, for the client port's own HTTP/2 server (grpc/front.ts). */
export interface BidiCore {
  /** Opens one call; `metadata` is the request's headers. */
  open(t: BidiTransport, metadata: IncomingHttpHeaders): BidiCall;
}
