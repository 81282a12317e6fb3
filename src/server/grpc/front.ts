// gRPC on the client port's own HTTP/2 server (http2/server-connection.ts). It serves the hot KV calls
// (Range, Put, DeleteRange, Txn) with grpc/fast-unary.ts's FastCall, answering with pre-encoded header
// blocks, and runs the two long-lived bidi streams, Watch and LeaseKeepAlive, through the same core grpc-js
// runs them with (v3rpc/edge.ts bidi()): a watch stream's responses of one turn leave in one DATA frame,
// with no grpc-js call, Node stream or second HTTP/2 hop per message. Every other call is relayed to
// grpc-js (grpc/relay.ts).
import type { IncomingHttpHeaders } from 'node:http2';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { status as Status } from '@grpc/grpc-js';
import { encodeHeaders } from '../http2/hpack.js';
import { serveHttp2 } from '../http2/server-connection.js';
import type { Block, ServerConnection, ServerStream, StreamHandler } from '../http2/server-connection.js';
import type { BidiCall, BidiCore, BidiTransport } from './bidi.js';
import { MessageReader } from './coalesce.js';
import { FastCall, servable } from './fast-unary.js';
import type { FastUnaryMethod } from './fast-unary.js';
import { RelayBackend } from './relay.js';
import { markPeerName } from './peer-name.js';
import { refuseNonGrpc } from './non-grpc.js';
import { GRPC_OK_BLOCKS, STATUS_AND_TYPE, statusTrailers } from './wire-status.js';
import type { WireStatus } from './wire-status.js';

/** A bidirectional streaming method served here: its codecs and the handler's core (v3rpc/edge.ts bidi()). */
export interface FastStreamMethod extends BidiCore {
  readonly path: string;
  readonly deserialize: (buf: Buffer) => unknown;
  /** A Buffer passes through as an encoded message. */
  readonly serialize: (res: unknown) => Buffer;
}

export interface GrpcFrontOptions {
  /** The unary methods served here, by :path; an empty map relays everything. */
  readonly fast: ReadonlyMap<string, FastUnaryMethod>;
  /** The bidi streaming methods served here (Watch, LeaseKeepAlive), by :path. */
  readonly streams: ReadonlyMap<string, FastStreamMethod>;
  /** The receive limit grpc-js applies (grpc.max_receive_message_length). */
  readonly maxReceive: number;
  /** A new in-memory connection into grpc-js's server (its injector), for relayed calls. */
  readonly backend: () => Duplex;
  readonly log: Logger;
  readonly keepaliveTimeMs: number;
  readonly keepaliveTimeoutMs: number;
  /** --max-concurrent-streams. */
  readonly maxConcurrentStreams?: number;
}

/**
 * Unary calls one connection may have running (started, not answered); the next wait, unstarted, in the
 * order they came. A call's work happens mostly in one piece when its read barrier or commit comes, and
 * many calls on one connection come at once: a client asking 400 times for a 1 MB value made the member
 * copy 400 MB in one turn of its loop (0.3 s). Clients keep fewer in flight per connection than this
 * (etcdctl one, the benchmarks 16), so for them nothing waits; a burst of large answers costs the loop at
 * most this many of them at once.
 */
const CALLS_PER_CONNECTION = 16;

/** The running calls of one connection, and those waiting for one of them to end. */
class CallGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  enter(start: () => void): void {
    if (this.running < CALLS_PER_CONNECTION) {
      this.running++;
      start();
    } else this.waiting.push(start);
  }

  /** A call ended: the first waiting starts in the next turn of the event loop, never in this one. */
  leave(): void {
    this.running--;
    const next = this.waiting.shift();
    if (!next) return;
    this.running++;
    setImmediate(next);
  }
}

function headerPairs(h: Record<string, string | number>): [string, string][] {
  return Object.entries(h).map(([k, v]) => [k, String(v)]);
}

/** A response of headers alone, carrying the status (gRPC's trailers-only form), ending the stream. */
function trailersOnly(stream: ServerStream, s: WireStatus): void {
  stream.headers(encodeHeaders(headerPairs({ ...STATUS_AND_TYPE, ...statusTrailers(s) })), true);
}

/**
 * Serves one client connection that opened with the HTTP/2 preface. `head` holds the bytes already read
 * (the preface at least); the socket must be paused. `peerName`: the CN of the connection's verified
 * client certificate, when it stands for the user (grpc/peer-name.ts).
 */
export function serveGrpcFront(sock: Socket, head: Buffer, opts: GrpcFrontOptions, peerName?: string): ServerConnection {
  const relay = new RelayBackend(opts.backend, opts.log);
  const gate = new CallGate();
  const maxReceive = opts.maxReceive;
  return serveHttp2(sock, head, {
    log: opts.log,
    okBlocks: GRPC_OK_BLOCKS,
    keepaliveTimeMs: opts.keepaliveTimeMs,
    keepaliveTimeoutMs: opts.keepaliveTimeoutMs,
    ...(opts.maxConcurrentStreams !== undefined ? { maxConcurrentStreams: opts.maxConcurrentStreams } : {}),
    onClose: () => relay.close(),
    open: (stream, request) => {
      const refused = refuseNonGrpc(stream, request);
      if (refused) return refused;
      markPeerName(request, peerName);
      const path = request[':path'];
      if (typeof path === 'string' && request[':method'] === 'POST' && servable(request)) {
        const method = opts.fast.get(path);
        if (method) return unaryCall(stream, method, request, maxReceive, gate);
        const streamMethod = opts.streams.get(path);
        // A deadline on a stream is rare (watches and keep-alives run for good): grpc-js keeps those.
        if (streamMethod && request['grpc-timeout'] === undefined) return new BidiStream(stream, streamMethod, request, maxReceive);
      }
      return relay.relay(stream, request);
    },
  });
}

function unaryCall(stream: ServerStream, method: FastUnaryMethod, request: IncomingHttpHeaders, maxReceive: number, gate: CallGate): StreamHandler {
  /** The call holds one of the connection's running places (from its start until its answer or reset). */
  let running = false;
  let over = false;
  const release = (): void => {
    if (!running) return;
    running = false;
    gate.leave();
  };
  const call = new FastCall(
    method,
    {
      ok: (msg) => {
        over = true;
        // The message is not copied behind its prefix: both go out as they are.
        const prefix = Buffer.allocUnsafe(5);
        prefix[0] = 0;
        prefix.writeUInt32BE(msg.length, 1);
        stream.respond('ok-headers', [prefix, msg], 'ok-trailers');
        release();
      },
      status: (s) => {
        over = true; // a deadline can answer a call still waiting for its place
        trailersOnly(stream, s);
        release();
      },
      gone: () => stream.over,
      room: () => stream.reserve(),
    },
    request,
    maxReceive,
  );
  return {
    drains: true,
    data: (chunk) => call.onData(chunk),
    end: () =>
      gate.enter(() => {
        // Not started when it is over already, or when its connection holds more than its client reads.
        if (over || !stream.reserve()) return gate.leave();
        running = true;
        call.onEnd();
      }),
    reset: () => {
      over = true;
      call.stop();
      release();
    },
  };
}

/** A Watch or LeaseKeepAlive stream served here. */
class BidiStream implements StreamHandler {
  readonly resetAfterEnd = true;
  private readonly reader: MessageReader;
  private call: BidiCall | undefined;

  constructor(
    private readonly stream: ServerStream,
    private readonly method: FastStreamMethod,
    private readonly request: IncomingHttpHeaders,
    private readonly maxReceive: number,
  ) {
    this.reader = new MessageReader(maxReceive === -1 ? Number.POSITIVE_INFINITY : maxReceive);
  }

  start(): void {
    const stream = this.stream;
    const transport: BidiTransport = {
      write: (res) => {
        // Like grpc-js, writes to a call that is over are dropped.
        if (stream.over) return true;
        let msg: Buffer;
        try {
          msg = this.method.serialize(res);
        } catch {
          this.endWith({ code: Status.INTERNAL, details: 'Error serializing response' }, true);
          return true;
        }
        this.sendHeaders();
        const prefix = Buffer.allocUnsafe(5);
        prefix[0] = 0;
        prefix.writeUInt32BE(msg.length, 1);
        const room = stream.push(prefix);
        return msg.length > 0 ? stream.push(msg) : room;
      },
      writeEncoded: (m) => {
        if (stream.over) return true;
        this.sendHeaders();
        return stream.pushInPlace(5 + m.length, (b, at) => {
          b[at] = 0;
          b.writeUInt32BE(m.length, at + 1);
          m.writeTo(b, at + 5);
        });
      },
      end: (s) => this.endWith(s, false),
    };
    this.call = this.method.open(transport, this.request);
  }

  /** Request messages from a DATA payload, decoded and handed to the call in order. */
  data(chunk: Buffer): void {
    const call = this.call as BidiCall;
    const { messages, tooLarge } = this.reader.push(chunk);
    for (const m of messages) {
      let req: unknown;
      try {
        req = this.method.deserialize(m);
      } catch {
        return this.endWith({ code: Status.INTERNAL, details: 'Error deserializing request' }, true);
      }
      call.request(req);
      if (this.stream.over) return;
    }
    if (tooLarge !== undefined) {
      this.endWith({ code: Status.RESOURCE_EXHAUSTED, details: `Received message larger than max (${tooLarge} vs ${this.maxReceive})` }, true);
    }
  }

  end(): void {
    if (!this.stream.over) this.call?.halfClose();
  }

  reset(): void {
    this.call?.cancel();
  }

  room(): void {
    this.call?.room();
  }

  /** A bidi stream's response headers go out with its first message. */
  private sendHeaders(): void {
    if (!this.stream.headersSent) this.stream.headers('ok-headers', false);
  }

  /**
   * Ends the stream with this status: trailers after the responses still queued, or a trailers-only
   * response when none went out. `cancel`: the end comes from here (a request grpc-js would refuse), so the
   * call is told, as grpc-js tells its handler.
   */
  private endWith(s: WireStatus, cancel: boolean): void {
    if (this.stream.over) return;
    if (cancel) this.call?.cancel();
    const trailers: Block = s.code === Status.OK ? 'ok-trailers' : encodeHeaders(headerPairs(statusTrailers(s)));
    if (this.stream.headersSent) this.stream.end(trailers);
    else trailersOnly(this.stream, s);
  }
}
