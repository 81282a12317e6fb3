// The client port's own HTTP/2 server. Node's HTTP/2 server costs about 85 µs of CPU per unary call on
// this machine (a Duplex per stream, header objects made and converted three times, two socket writes per
// response); this one costs about 15. It reads the frames itself and serves the hot KV calls (Range, Put,
// DeleteRange, Txn) with grpc/fast-unary.ts's FastCall, answering with pre-encoded header blocks and one
// socket write per turn of the event loop for every response ready by then. It also runs the two long-lived
// bidi streams, Watch and LeaseKeepAlive, through the same core grpc-js runs them with (v3rpc/edge.ts
// bidi()): a watch stream's responses of one turn leave in one DATA frame, with no grpc-js call, Node
// stream or second HTTP/2 hop per message.
//
// Everything else (Lease's unary calls, Cluster, Maintenance, Auth, health, and any call it would not serve
// exactly as grpc-js does: compressed, another content type, an unreadable timeout, a stream with a
// deadline) is relayed, stream by stream, to grpc-js through an in-process HTTP/2 connection that Node's
// client speaks. Those calls get grpc-js's behaviour unchanged, at the cost of one more hop in memory.
//
// What it implements of RFC 9113: the preface and SETTINGS (initial window, frame size), HEADERS with
// CONTINUATION, padding and priority, DATA, RST_STREAM, PING, GOAWAY, WINDOW_UPDATE; flow control both
// ways (a relayed stream's window opens only as grpc-js takes its data; responses wait for the client's
// windows); HPACK with the client's dynamic table (http2/hpack.ts). A connection error sends GOAWAY and closes.
import http2 from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { status as Status } from '@grpc/grpc-js';
import type { BidiCall, BidiCore, BidiTransport, WireStatus } from '../v3rpc/edge.js';
import type { FastUnaryMethod, UnaryAnswer } from '../grpc/fast-unary.js';
import { FastCall, STATUS_AND_TYPE, first, servable, statusTrailers } from '../grpc/fast-unary.js';
import {
  E_CANCEL,
  E_COMPRESSION,
  E_FLOW_CONTROL,
  E_FRAME_SIZE,
  E_NO_ERROR,
  E_PROTOCOL,
  E_REFUSED_STREAM,
  F_ACK,
  F_END_HEADERS,
  F_END_STREAM,
  F_PADDED,
  F_PRIORITY,
  FRAME_HEADER_LEN,
  HTTP2_PREFACE,
  S_HEADER_TABLE_SIZE,
  S_INITIAL_WINDOW_SIZE,
  S_MAX_FRAME_SIZE,
  T_CONTINUATION,
  T_DATA,
  T_GOAWAY,
  T_HEADERS,
  T_PING,
  T_PUSH_PROMISE,
  T_RST_STREAM,
  T_SETTINGS,
  T_WINDOW_UPDATE,
} from './frames.js';
import { MessageReader } from '../grpc/coalesce.js';
import { HpackDecoder, HpackError, OkBlockEncoder, encodeHeaders } from './hpack.js';
import type { HeaderList } from './hpack.js';

const DEFAULT_WINDOW = 65_535;

/** A 4-byte big-endian payload (WINDOW_UPDATE's increment, RST_STREAM's error code). */
function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
}
const MAX_WINDOW = 2 ** 31 - 1;
/** The frame size this side accepts (the protocol's default; it announces no other). */
const MAX_RECEIVE_FRAME = 16_384;
/** A request's header block may not grow past this over CONTINUATION frames. */
const MAX_HEADER_BLOCK = 256 * 1024;
/** A relayed response stops reading from grpc-js while this much waits for the client's window. */
const RELAY_HIGH_WATER = 1024 * 1024;
/** A stream served here asks its handler to wait while this much of its responses waits to be sent. */
const STREAM_HIGH_WATER = 64 * 1024;
/** DATA waits, whatever the windows say, while this much is still to be written to a slow socket. */
const SOCKET_HIGH_WATER = 4 * 1024 * 1024;
/** A bidi stream's messages written in place (writeEncoded) go into buffers of this size, one after another. */
const STAGE_BYTES = 16 * 1024;

/**
 * A header block to send: encoded bytes, or one of the two blocks the fast path sends most (an OK
 * response's headers and trailers), encoded when they go out since they use the client's dynamic table.
 */
type Block = Buffer | 'ok-headers' | 'ok-trailers';

function headerPairs(h: Record<string, string | number>): [string, string][] {
  return Object.entries(h).map(([k, v]) => [k, String(v)]);
}

/** Node's HTTP/2 header object (from grpc-js's responses) as pairs, :status first. */
function outgoingPairs(h: IncomingHttpHeaders): [string, string][] {
  const out: [string, string][] = [];
  const status = h[':status'];
  if (status !== undefined) out.push([':status', String(status)]);
  for (const [k, v] of Object.entries(h)) {
    if (k.startsWith(':') || v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) out.push([k, x]);
    else out.push([k, String(v)]);
  }
  return out;
}

/** Connection-specific fields HTTP/2 forbids in requests (RFC 9113 §8.2.2); Node's client refuses them too. */
const CONNECTION_FIELDS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

interface FrontStream {
  readonly id: number;
  sendWindow: number;
  /** DATA payload waiting for window, then the trailers block (or an empty END_STREAM) to follow it. */
  readonly queue: Buffer[];
  queued: number;
  trailers: Block | undefined;
  endQueued: boolean;
  remoteEnded: boolean;
  localEnded: boolean;
  call?: FastCall;
  relay?: ClientHttp2Stream;
  /** A bidi stream served here, its method and the reader of its request messages. */
  bidi?: BidiCall;
  bidiMethod?: FastStreamMethod;
  reader?: MessageReader;
  /** Whether response headers went out (a bidi stream sends them with its first message). */
  headersSent: boolean;
  /** A bidi stream's handler was told to wait (write() returned false). */
  wantRoom: boolean;
  /** Stream-window bytes the client used that this side has not given back yet. */
  toReturn: number;
  /** What the client may still send on this stream before a WINDOW_UPDATE. */
  recvWindow: number;
  /**
   * Where a bidi stream's messages are written in place, gRPC prefix included: bytes from stageFrom to
   * stageAt are counted in `queued` but not yet in `queue` (sealStage() moves them there, in order).
   */
  stage: Buffer | undefined;
  stageFrom: number;
  stageAt: number;
}

/** A bidirectional streaming method served here: its codecs and the edge's core (v3rpc/edge.ts bidi()). */
export interface FastStreamMethod extends BidiCore {
  readonly path: string;
  readonly deserialize: (buf: Buffer) => unknown;
  /** A Buffer passes through as an encoded message. */
  readonly serialize: (res: unknown) => Buffer;
}

export interface H2FrontOptions {
  /** The unary methods served here, by :path; an empty map relays everything. */
  readonly fast: ReadonlyMap<string, FastUnaryMethod>;
  /** The bidi streaming methods served here (Watch, LeaseKeepAlive), by :path. */
  readonly streams: ReadonlyMap<string, FastStreamMethod>;
  /** The receive limit grpc-js applies (grpc.max_receive_message_length). */
  readonly maxReceive: number;
  /** A new in-memory connection into grpc-js's server (its injector), for relayed calls. */
  readonly backend: () => Duplex;
  readonly log: Logger;
  /** After this long without a frame from the client, PING it (etcd's --grpc-keepalive-interval, 2 h)... */
  readonly keepaliveTimeMs: number;
  /** ...and close the connection if the answer takes longer than this (--grpc-keepalive-timeout, 20 s). */
  readonly keepaliveTimeoutMs: number;
}

/** A served connection, as the client port sees it when it stops. */
export interface H2FrontConnection {
  /**
   * Sends GOAWAY (no new streams; those already open go on) and resolves once no fast call is left
   * unanswered. Streams (watches, keep-alives) never end on their own: they end with the connection.
   */
  goaway(): Promise<void>;
}

/**
 * Serves one client connection that opened with the HTTP/2 preface. `head` holds the bytes already read
 * (the preface at least); the socket must be paused.
 */
export function serveH2Front(sock: Socket, head: Buffer, opts: H2FrontOptions): H2FrontConnection {
  const front = new H2Front(sock, opts);
  front.start(head);
  return front;
}

class H2Front implements H2FrontConnection {
  private buf: Buffer = Buffer.alloc(0);
  private prefaceLeft = HTTP2_PREFACE.length;
  private readonly streams = new Map<number, FrontStream>();
  private lastStreamId = 0;
  private readonly decoder = new HpackDecoder();
  /** A header block being continued: its stream, flags and pieces. */
  private continuing: { id: number; endStream: boolean; parts: Buffer[]; size: number } | undefined;
  private peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxFrame = 16_384;
  /** This side's view of the client's HPACK dynamic table, for OK headers and trailers. */
  private readonly okBlocks = new OkBlockEncoder();
  private connSendWindow = DEFAULT_WINDOW;
  /** Connection-window bytes the client used that this side has not given back yet. */
  private connToReturn = 0;
  /** What the client may still send on the connection before a WINDOW_UPDATE. */
  private connRecvWindow = DEFAULT_WINDOW;
  /** Streams with data waiting for window, in the order they started waiting. */
  private readonly blocked = new Set<FrontStream>();
  /** Bidi streams whose responses of this turn go out at the flush, several messages to a DATA frame. */
  private readonly pumpLater = new Set<FrontStream>();
  private out: Buffer[] = [];
  private outBytes = 0;
  private flushScheduled = false;
  /** Inside flush(): frames added now go out with it. */
  private flushing = false;
  private closed = false;
  private backend: ClientHttp2Session | undefined;
  /** Whether a frame came in since the keepalive timer last looked. */
  private heard = false;
  private keepalive: NodeJS.Timeout | undefined;
  private goingAway = false;
  private drained: (() => void)[] = [];

  constructor(
    private readonly sock: Socket,
    private readonly opts: H2FrontOptions,
  ) {}

  start(head: Buffer): void {
    this.frame(T_SETTINGS, 0, 0, Buffer.alloc(0));
    this.sock.on('data', (chunk: Buffer) => this.onData(chunk));
    this.sock.on('error', () => this.sock.destroy());
    this.sock.on('close', () => this.onClose());
    this.sock.on('drain', () => this.drainBlocked());
    this.onData(head);
    this.sock.resume();
    this.keepalive = setTimeout(() => this.checkAlive(), this.opts.keepaliveTimeMs).unref();
  }

  /** Keepalive: a connection silent for keepaliveTimeMs gets a PING and keepaliveTimeoutMs to answer it. */
  private checkAlive(): void {
    if (this.closed) return;
    if (this.heard) {
      this.heard = false;
      this.keepalive = setTimeout(() => this.checkAlive(), this.opts.keepaliveTimeMs).unref();
      return;
    }
    this.frame(T_PING, 0, 0, Buffer.alloc(8));
    this.keepalive = setTimeout(() => {
      if (this.heard) return this.checkAlive();
      this.opts.log.debug('client did not answer a keepalive PING: closing its connection');
      this.sock.destroy();
    }, this.opts.keepaliveTimeoutMs).unref();
  }

  goaway(): Promise<void> {
    if (!this.goingAway && !this.closed) {
      this.goingAway = true;
      this.frame(T_GOAWAY, 0, 0, goawayPayload(this.lastStreamId, E_NO_ERROR, ''));
      this.flush(); // now: the port may destroy the socket before the next turn
    }
    return this.pendingCalls() === 0 ? Promise.resolve() : new Promise((resolve) => this.drained.push(resolve));
  }

  private pendingCalls(): number {
    if (this.closed) return 0;
    let n = 0;
    for (const st of this.streams.values()) if (st.call && !st.localEnded) n++;
    return n;
  }

  // ---- reading ----

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.heard = true;
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    try {
      if (this.prefaceLeft > 0) {
        if (this.buf.length < this.prefaceLeft) return;
        this.buf = this.buf.subarray(this.prefaceLeft);
        this.prefaceLeft = 0;
      }
      let pos = 0;
      const b = this.buf;
      while (b.length - pos >= FRAME_HEADER_LEN) {
        const len = b.readUIntBE(pos, 3);
        if (len > MAX_RECEIVE_FRAME) throw new ConnectionError(E_FRAME_SIZE, `frame of ${len} bytes`);
        if (b.length - pos < FRAME_HEADER_LEN + len) break;
        const type = b[pos + 3] as number;
        const flags = b[pos + 4] as number;
        const id = b.readUInt32BE(pos + 5) & 0x7fffffff;
        const payload = b.subarray(pos + FRAME_HEADER_LEN, pos + FRAME_HEADER_LEN + len);
        pos += FRAME_HEADER_LEN + len;
        this.onFrame(type, flags, id, payload);
        if (this.closed) return;
      }
      this.buf = pos === b.length ? Buffer.alloc(0) : b.subarray(pos);
    } catch (e) {
      if (e instanceof ConnectionError) this.fail(e.code, e.message);
      else if (e instanceof HpackError) this.fail(E_COMPRESSION, e.message);
      else throw e;
    }
  }

  private onFrame(type: number, flags: number, id: number, p: Buffer): void {
    if (this.continuing && type !== T_CONTINUATION) throw new ConnectionError(E_PROTOCOL, 'expected CONTINUATION');
    switch (type) {
      case T_DATA:
        return this.onDataFrame(flags, id, p);
      case T_HEADERS:
        return this.onHeaders(flags, id, p);
      case T_CONTINUATION:
        return this.onContinuation(flags, id, p);
      case T_RST_STREAM:
        if (p.length !== 4) throw new ConnectionError(E_FRAME_SIZE, 'RST_STREAM size');
        return this.onReset(id, p.readUInt32BE(0));
      case T_SETTINGS:
        return this.onSettings(flags, id, p);
      case T_PING:
        if (p.length !== 8) throw new ConnectionError(E_FRAME_SIZE, 'PING size');
        if ((flags & F_ACK) === 0) this.frame(T_PING, F_ACK, 0, Buffer.from(p));
        return;
      case T_GOAWAY:
        return; // the client opens no more streams; it closes the connection when it is done
      case T_WINDOW_UPDATE:
        return this.onWindowUpdate(id, p);
      case T_PUSH_PROMISE:
        throw new ConnectionError(E_PROTOCOL, 'PUSH_PROMISE from a client');
      default:
        return; // PRIORITY and unknown types are ignored (§5.3.2, §5.5)
    }
  }

  /** A frame's payload without its padding (and the priority fields of HEADERS). */
  private unpad(flags: number, p: Buffer, priority: boolean): Buffer {
    let start = 0;
    let end = p.length;
    if (flags & F_PADDED) {
      if (p.length < 1) throw new ConnectionError(E_PROTOCOL, 'padded frame too short');
      end -= p[0] as number;
      start = 1;
    }
    if (priority && flags & F_PRIORITY) start += 5;
    if (end < start) throw new ConnectionError(E_PROTOCOL, 'padding exceeds the frame');
    return p.subarray(start, end);
  }

  private onDataFrame(flags: number, id: number, p: Buffer): void {
    if (id === 0) throw new ConnectionError(E_PROTOCOL, 'DATA on stream 0');
    // Flow control counts the whole payload, padding included. A client that sends past a window
    // this side announced breaks the protocol (RFC 9113 §6.9.1).
    this.connRecvWindow -= p.length;
    if (this.connRecvWindow < 0) throw new ConnectionError(E_FLOW_CONTROL, 'DATA past the connection window');
    this.connToReturn += p.length;
    try {
      this.onStreamData(flags, id, p);
    } finally {
      // The window goes back at this turn's flush, scheduled only now: a call the data completed has
      // scheduled its own work first (a proposal, a forward to the leader), and the 13-byte frame's
      // system call no longer runs ahead of it. Lone reads through a follower and reads/s gained a few %.
      this.scheduleFlush();
    }
  }

  private onStreamData(flags: number, id: number, p: Buffer): void {
    const st = this.streams.get(id);
    const data = this.unpad(flags, p, false);
    const end = (flags & F_END_STREAM) !== 0;
    if (!st || st.remoteEnded) {
      if (id > this.lastStreamId) throw new ConnectionError(E_PROTOCOL, 'DATA on an idle stream');
      return; // a stream this side already closed: dropped
    }
    st.recvWindow -= p.length;
    if (st.recvWindow < 0) return this.resetStream(st, E_FLOW_CONTROL);
    if (end) st.remoteEnded = true;
    if (st.relay) {
      const relay = st.relay;
      const size = p.length;
      if (data.length > 0) {
        // The client's window for this stream opens again only as grpc-js takes the data.
        relay.write(data, () => this.returnStreamWindow(st, size));
      } else this.returnStreamWindow(st, size);
      if (end) relay.end();
    } else if (st.bidi) {
      if (!end) this.returnStreamWindow(st, p.length);
      if (data.length > 0 && !st.localEnded) this.bidiData(st, data);
      if (end && !st.localEnded) st.bidi.halfClose();
    } else {
      if (!end) this.returnStreamWindow(st, p.length);
      if (data.length > 0) st.call?.onData(data);
      if (end) st.call?.onEnd();
    }
    this.maybeForget(st);
  }

  private returnStreamWindow(st: FrontStream, n: number): void {
    if (st.remoteEnded || !this.streams.has(st.id)) return;
    st.toReturn += n;
    this.scheduleFlush();
  }

  private onHeaders(flags: number, id: number, p: Buffer): void {
    if (id === 0) throw new ConnectionError(E_PROTOCOL, 'HEADERS on stream 0');
    const block = this.unpad(flags, p, true);
    const endStream = (flags & F_END_STREAM) !== 0;
    if ((flags & F_END_HEADERS) === 0) {
      this.continuing = { id, endStream, parts: [Buffer.from(block)], size: block.length };
      return;
    }
    this.onHeaderBlock(id, endStream, block);
  }

  private onContinuation(flags: number, id: number, p: Buffer): void {
    const c = this.continuing;
    if (!c || c.id !== id) throw new ConnectionError(E_PROTOCOL, 'unexpected CONTINUATION');
    c.parts.push(Buffer.from(p));
    c.size += p.length;
    if (c.size > MAX_HEADER_BLOCK) throw new ConnectionError(E_PROTOCOL, 'header block too large');
    if ((flags & F_END_HEADERS) === 0) return;
    this.continuing = undefined;
    this.onHeaderBlock(id, c.endStream, Buffer.concat(c.parts));
  }

  private onHeaderBlock(id: number, endStream: boolean, block: Buffer): void {
    // Decoded even for streams that are gone: the table must follow the client's encoder.
    const fields = this.decoder.decode(block);
    const st = this.streams.get(id);
    if (st) {
      // Trailers from the client end its side of the stream; gRPC requests carry none worth keeping.
      if (!endStream) throw new ConnectionError(E_PROTOCOL, 'second HEADERS without END_STREAM');
      st.remoteEnded = true;
      if (st.relay) st.relay.end();
      else if (st.bidi) {
        if (!st.localEnded) st.bidi.halfClose();
      } else st.call?.onEnd();
      this.maybeForget(st);
      return;
    }
    if (id <= this.lastStreamId || id % 2 === 0) {
      if (id % 2 === 0) throw new ConnectionError(E_PROTOCOL, 'even stream id from a client');
      return; // trailers on a stream already closed here
    }
    if (this.goingAway) return; // past the GOAWAY's last stream id: the client retries it elsewhere
    this.lastStreamId = id;
    this.openStream(id, fields, endStream);
  }

  private openStream(id: number, fields: HeaderList, endStream: boolean): void {
    const st: FrontStream = {
      id,
      sendWindow: this.peerInitialWindow,
      queue: [],
      queued: 0,
      trailers: undefined,
      endQueued: false,
      remoteEnded: endStream,
      localEnded: false,
      toReturn: 0,
      recvWindow: DEFAULT_WINDOW,
      headersSent: false,
      wantRoom: false,
      stage: undefined,
      stageFrom: 0,
      stageAt: 0,
    };
    this.streams.set(id, st);
    const headers: IncomingHttpHeaders = {};
    for (const [name, value] of fields) {
      const prev = headers[name];
      if (prev === undefined) headers[name] = value;
      else headers[name] = Array.isArray(prev) ? [...prev, value] : [prev as string, value];
    }
    const path = headers[':path'];
    if (typeof path === 'string' && headers[':method'] === 'POST' && servable(headers)) {
      const method = this.opts.fast.get(path);
      if (method) {
        st.call = new FastCall(method, this.answerFor(st), headers, this.opts.maxReceive, this.opts.log);
        if (endStream) st.call.onEnd();
        return;
      }
      const streamMethod = this.opts.streams.get(path);
      // A deadline on a stream is rare (watches and keep-alives run for good): grpc-js keeps those.
      if (streamMethod && headers['grpc-timeout'] === undefined) {
        this.openBidi(st, streamMethod, headers, endStream);
        return;
      }
    }
    this.relay(st, headers, endStream);
  }

  private onReset(id: number, code: number): void {
    if (id === 0) throw new ConnectionError(E_PROTOCOL, 'RST_STREAM on stream 0');
    const st = this.streams.get(id);
    if (!st) return;
    st.localEnded = true;
    st.remoteEnded = true;
    st.call?.stop();
    st.bidi?.cancel();
    if (st.relay && !st.relay.closed) st.relay.close(code === E_NO_ERROR ? E_CANCEL : code);
    this.forget(st);
  }

  private onSettings(flags: number, id: number, p: Buffer): void {
    if (id !== 0) throw new ConnectionError(E_PROTOCOL, 'SETTINGS on a stream');
    if (flags & F_ACK) return;
    if (p.length % 6 !== 0) throw new ConnectionError(E_FRAME_SIZE, 'SETTINGS size');
    for (let i = 0; i < p.length; i += 6) {
      const key = p.readUInt16BE(i);
      const value = p.readUInt32BE(i + 2);
      if (key === S_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) throw new ConnectionError(E_FLOW_CONTROL, 'initial window too large');
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const st of this.streams.values()) st.sendWindow += delta;
      } else if (key === S_MAX_FRAME_SIZE) {
        if (value < 16_384 || value > 16_777_215) throw new ConnectionError(E_PROTOCOL, 'max frame size out of range');
        this.peerMaxFrame = value;
      } else if (key === S_HEADER_TABLE_SIZE) {
        this.okBlocks.peerTableSize(value);
      }
    }
    this.frame(T_SETTINGS, F_ACK, 0, Buffer.alloc(0));
    this.drainBlocked();
  }

  private onWindowUpdate(id: number, p: Buffer): void {
    if (p.length !== 4) throw new ConnectionError(E_FRAME_SIZE, 'WINDOW_UPDATE size');
    const inc = p.readUInt32BE(0) & 0x7fffffff;
    if (id === 0) {
      if (inc === 0) throw new ConnectionError(E_PROTOCOL, 'zero window increment');
      this.connSendWindow += inc;
      if (this.connSendWindow > MAX_WINDOW) throw new ConnectionError(E_FLOW_CONTROL, 'connection window overflow');
    } else {
      const st = this.streams.get(id);
      if (!st) return;
      if (inc === 0) return this.resetStream(st, E_PROTOCOL);
      st.sendWindow += inc;
      if (st.sendWindow > MAX_WINDOW) return this.resetStream(st, E_FLOW_CONTROL);
    }
    this.drainBlocked();
  }

  // ---- fast calls ----

  private answerFor(st: FrontStream): UnaryAnswer {
    return {
      ok: (framed) => {
        this.headers(st.id, 'ok-headers', false);
        this.sendData(st, framed);
        this.endWith(st, 'ok-trailers');
      },
      status: (s: WireStatus) => this.trailersOnly(st, s),
      gone: () => this.closed || st.localEnded || this.streams.get(st.id) !== st,
    };
  }

  // ---- bidi streams served here ----

  private openBidi(st: FrontStream, method: FastStreamMethod, headers: IncomingHttpHeaders, endStream: boolean): void {
    st.reader = new MessageReader(this.opts.maxReceive === -1 ? Number.POSITIVE_INFINITY : this.opts.maxReceive);
    const transport: BidiTransport = {
      write: (res) => {
        // Like grpc-js, writes to a call that is over are dropped.
        if (this.bidiOver(st)) return true;
        let msg: Buffer;
        try {
          msg = method.serialize(res);
        } catch {
          this.endBidi(st, { code: Status.INTERNAL, details: 'Error serializing response' }, true);
          return true;
        }
        this.bidiHeaders(st);
        this.sealStage(st);
        const prefix = Buffer.allocUnsafe(5);
        prefix[0] = 0;
        prefix.writeUInt32BE(msg.length, 1);
        st.queue.push(prefix);
        if (msg.length > 0) st.queue.push(msg);
        return this.bidiQueued(st, 5 + msg.length);
      },
      writeEncoded: (m) => {
        if (this.bidiOver(st)) return true;
        this.bidiHeaders(st);
        const need = 5 + m.length;
        let b = st.stage;
        if (!b || b.length - st.stageAt < need) {
          this.sealStage(st);
          b = st.stage = Buffer.allocUnsafe(Math.max(STAGE_BYTES, need));
          st.stageFrom = st.stageAt = 0;
        }
        const at = st.stageAt;
        b[at] = 0;
        b.writeUInt32BE(m.length, at + 1);
        m.writeTo(b, at + 5);
        st.stageAt = at + need;
        return this.bidiQueued(st, need);
      },
      end: (s) => this.endBidi(st, s, false),
    };
    st.bidiMethod = method;
    st.bidi = method.open(transport, first(headers.hasleader) === 'true');
    if (endStream) st.bidi.halfClose();
  }

  /** A bidi stream's response headers go out with its first message. */
  private bidiHeaders(st: FrontStream): void {
    if (st.headersSent) return;
    st.headersSent = true;
    this.headers(st.id, 'ok-headers', false);
  }

  /** Counts `bytes` of a bidi stream's message as queued; false (and room() later) when the stream is full. */
  private bidiQueued(st: FrontStream, bytes: number): boolean {
    st.queued += bytes;
    this.pumpLater.add(st);
    this.scheduleFlushSoon();
    if (st.queued < STREAM_HIGH_WATER) return true;
    st.wantRoom = true;
    return false;
  }

  /** Moves the messages written in place so far into the stream's queue, behind what is there. */
  private sealStage(st: FrontStream): void {
    if (st.stageAt === st.stageFrom) return;
    st.queue.push((st.stage as Buffer).subarray(st.stageFrom, st.stageAt));
    st.stageFrom = st.stageAt;
  }

  /** Request messages from a DATA payload, decoded and handed to the stream's call in order. */
  private bidiData(st: FrontStream, data: Buffer): void {
    const reader = st.reader as MessageReader;
    const call = st.bidi as BidiCall;
    const method = st.bidiMethod as FastStreamMethod;
    const { messages, tooLarge } = reader.push(data);
    for (const m of messages) {
      let req: unknown;
      try {
        req = method.deserialize(m);
      } catch {
        return this.endBidi(st, { code: Status.INTERNAL, details: 'Error deserializing request' }, true);
      }
      call.request(req);
      if (st.localEnded) return;
    }
    if (tooLarge !== undefined) {
      this.endBidi(st, { code: Status.RESOURCE_EXHAUSTED, details: `Received message larger than max (${tooLarge} vs ${this.opts.maxReceive})` }, true);
    }
  }

  /**
   * Ends a bidi stream with this status: trailers after the responses still queued, or a trailers-only
   * response when none went out. `cancel`: the end comes from here (a request grpc-js would refuse), so the
   * call is told, as grpc-js tells its handler.
   */
  private endBidi(st: FrontStream, s: WireStatus, cancel: boolean): void {
    if (this.bidiOver(st)) return;
    if (cancel) st.bidi?.cancel();
    const trailers: Block = s.code === Status.OK ? 'ok-trailers' : encodeHeaders(headerPairs(statusTrailers(s)));
    if (st.headersSent) this.endWith(st, trailers);
    else this.trailersOnly(st, s);
  }

  /** A response of headers alone, carrying the status (gRPC's trailers-only form), ending the stream. */
  private trailersOnly(st: FrontStream, s: WireStatus): void {
    this.headers(st.id, encodeHeaders(headerPairs({ ...STATUS_AND_TYPE, ...statusTrailers(s) })), true);
    st.localEnded = true;
    this.maybeForget(st);
  }

  /** A bidi stream that can no longer send: ended, ending, or gone. */
  private bidiOver(st: FrontStream): boolean {
    return st.localEnded || st.endQueued || this.streams.get(st.id) !== st;
  }

  // ---- relayed calls ----

  private backendSession(): ClientHttp2Session {
    if (this.backend && !this.backend.closed && !this.backend.destroyed) return this.backend;
    const conn = this.opts.backend();
    const session = http2.connect('http://setpoint.internal', { createConnection: () => conn });
    session.on('error', () => undefined); // its streams' 'close' events carry what matters
    session.once('close', () => {
      if (this.backend === session) this.backend = undefined;
    });
    this.backend = session;
    return session;
  }

  /** `request`: the client's headers as openStream() gathered them (repeated fields as arrays). */
  private relay(st: FrontStream, request: IncomingHttpHeaders, endStream: boolean): void {
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(request)) {
      if (value === undefined) continue;
      if (name === ':path' || name === ':method') headers[name] = Array.isArray(value) ? value[value.length - 1] : value;
      else if (name.startsWith(':')) continue; // :scheme and :authority are the internal connection's
      else if (CONNECTION_FIELDS.has(name) || (name === 'te' && [value].flat().some((v) => v !== 'trailers'))) return this.resetStream(st, E_PROTOCOL);
      else headers[name] = value;
    }
    let req: ClientHttp2Stream;
    try {
      req = this.backendSession().request(headers, { endStream });
    } catch (e) {
      this.opts.log.debug({ err: (e as Error).message }, 'relay refused a request');
      return this.resetStream(st, E_REFUSED_STREAM);
    }
    st.relay = req;
    // Node emits 'response' on the next tick but 'data' at once, so DATA can come before the headers it
    // must follow: it waits here until they are out.
    let responded = false;
    let early: Buffer[] = [];
    let endedEarly = false;
    let trailers: Buffer | undefined;
    const end = (): void => {
      if (!st.localEnded) this.endWith(st, trailers);
    };
    req.on('response', (h: IncomingHttpHeaders, flags: number) => {
      const endStream = (flags & F_END_STREAM) !== 0;
      this.headers(st.id, encodeHeaders(outgoingPairs(h)), endStream);
      responded = true;
      if (endStream) {
        st.localEnded = true;
        this.maybeForget(st);
        return;
      }
      for (const chunk of early) this.sendData(st, chunk);
      early = [];
      if (endedEarly) end();
    });
    req.on('trailers', (h: IncomingHttpHeaders) => {
      trailers = encodeHeaders(outgoingPairs(h));
    });
    req.on('data', (chunk: Buffer) => {
      if (st.localEnded) return;
      if (!responded) early.push(chunk);
      else this.sendData(st, chunk);
      if (st.queued > RELAY_HIGH_WATER) req.pause();
    });
    let ended = false;
    req.on('end', () => {
      ended = true;
      if (responded) end();
      else endedEarly = true;
    });
    req.on('error', () => undefined); // 'close' follows
    req.on('close', () => {
      if (st.localEnded || this.streams.get(st.id) !== st) return;
      // Ended cleanly: its end is queued behind data still waiting for the client's window (or behind
      // its headers), and goes out after it.
      if (ended && (req.rstCode ?? E_NO_ERROR) === E_NO_ERROR) return;
      this.resetStream(st, req.rstCode && req.rstCode !== E_NO_ERROR ? req.rstCode : E_CANCEL);
    });
  }

  // ---- writing ----

  private frame(type: number, flags: number, id: number, payload: Buffer): void {
    this.frameHeader(type, flags, id, payload.length);
    if (payload.length > 0) this.out.push(payload);
  }

  /** A frame's 9-byte header; its payload, `length` bytes, must be pushed to `out` right after. */
  private frameHeader(type: number, flags: number, id: number, length: number): void {
    const h = Buffer.allocUnsafe(FRAME_HEADER_LEN);
    h.writeUIntBE(length, 0, 3);
    h[3] = type;
    h[4] = flags;
    h.writeUInt32BE(id, 5);
    this.out.push(h);
    this.outBytes += FRAME_HEADER_LEN + length;
    this.scheduleFlush();
  }

  /** A header block as HEADERS and, past the client's frame size, CONTINUATION frames. */
  private headers(id: number, b: Block, endStream: boolean): void {
    const block = b === 'ok-headers' ? this.okBlocks.headers() : b === 'ok-trailers' ? this.okBlocks.trailers() : this.okBlocks.block(b);
    const max = this.peerMaxFrame;
    const es = endStream ? F_END_STREAM : 0;
    if (block.length <= max) return this.frame(T_HEADERS, F_END_HEADERS | es, id, block);
    this.frame(T_HEADERS, es, id, block.subarray(0, max));
    for (let at = max; at < block.length; at += max) {
      const last = at + max >= block.length;
      this.frame(T_CONTINUATION, last ? F_END_HEADERS : 0, id, block.subarray(at, at + max));
    }
  }

  private sendData(st: FrontStream, data: Buffer): void {
    if (data.length === 0) return;
    st.queue.push(data);
    st.queued += data.length;
    this.pump(st);
  }

  /** Ends a stream after its queued data: with trailers, or an empty DATA frame with END_STREAM. */
  private endWith(st: FrontStream, trailers: Block | undefined): void {
    st.trailers = trailers;
    st.endQueued = true;
    this.pump(st);
  }

  /**
   * Sends what the windows allow of a stream's queue, then its end once the queue is empty. Queued pieces
   * share a DATA frame up to the room there is (a bidi stream's messages of one turn go out together).
   */
  private pump(st: FrontStream): void {
    this.sealStage(st);
    while (st.queued > 0) {
      const room = Math.min(st.sendWindow, this.connSendWindow, this.peerMaxFrame);
      if (room <= 0 || this.outBytes + this.sock.writableLength > SOCKET_HIGH_WATER) {
        this.blocked.add(st);
        return;
      }
      const size = Math.min(room, st.queued);
      st.queued -= size;
      st.sendWindow -= size;
      this.connSendWindow -= size;
      const last = st.queued === 0 && st.endQueued && st.trailers === undefined;
      this.frameHeader(T_DATA, last ? F_END_STREAM : 0, st.id, size);
      for (let left = size; left > 0; ) {
        const head = st.queue[0] as Buffer;
        if (head.length <= left) {
          st.queue.shift();
          this.out.push(head);
          left -= head.length;
        } else {
          this.out.push(head.subarray(0, left));
          st.queue[0] = head.subarray(left);
          left = 0;
        }
      }
      if (last) {
        st.endQueued = false;
        st.localEnded = true;
      }
    }
    this.blocked.delete(st);
    if (st.relay?.isPaused() && st.queued <= RELAY_HIGH_WATER / 2) st.relay.resume();
    if (st.wantRoom && st.queued < STREAM_HIGH_WATER / 2) {
      st.wantRoom = false;
      const call = st.bidi;
      if (call) queueMicrotask(() => call.room());
    }
    if (st.endQueued) {
      st.endQueued = false;
      st.localEnded = true;
      if (st.trailers) this.headers(st.id, st.trailers, true);
      else this.frame(T_DATA, F_END_STREAM, st.id, Buffer.alloc(0));
      st.trailers = undefined;
    }
    this.maybeForget(st);
  }

  private drainBlocked(): void {
    for (const st of [...this.blocked]) {
      if (this.connSendWindow <= 0 || this.outBytes + this.sock.writableLength > SOCKET_HIGH_WATER) return;
      this.pump(st);
    }
  }

  private resetStream(st: FrontStream, code: number): void {
    this.rstFrame(st.id, code);
    st.localEnded = true;
    st.remoteEnded = true;
    st.call?.stop();
    st.bidi?.cancel();
    if (st.relay && !st.relay.closed) st.relay.close(E_CANCEL);
    this.forget(st);
  }

  private maybeForget(st: FrontStream): void {
    if (st.bidi && st.localEnded && !st.remoteEnded) {
      // A call this side ended while the client may still send: the rest of its stream is not wanted.
      this.rstFrame(st.id, E_NO_ERROR);
      st.remoteEnded = true;
    }
    if (st.localEnded && st.remoteEnded) this.forget(st);
    else if (this.drained.length > 0 && this.pendingCalls() === 0) this.wakeDrained();
  }

  private forget(st: FrontStream): void {
    if (this.streams.get(st.id) === st) this.streams.delete(st.id);
    this.blocked.delete(st);
    this.pumpLater.delete(st);
    st.queue.length = 0;
    st.queued = 0;
    st.stage = undefined;
    st.stageFrom = st.stageAt = 0;
    if (this.drained.length > 0 && this.pendingCalls() === 0) this.wakeDrained();
  }

  private wakeDrained(): void {
    const waiting = this.drained;
    this.drained = [];
    for (const resolve of waiting) resolve();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.flushing || this.closed) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private microFlushScheduled = false;

  /**
   * A bidi stream's responses go out once the callback writing them is done (its microtasks), not a turn
   * of the event loop later: the writers (watch pumps) already run in an immediate, after the commit that
   * made the events, and a flush scheduled from there waited for the next turn's I/O callbacks.
   */
  private scheduleFlushSoon(): void {
    if (this.microFlushScheduled || this.flushing || this.closed) return;
    this.microFlushScheduled = true;
    queueMicrotask(() => {
      this.microFlushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.closed) return;
    this.flushing = true;
    if (this.pumpLater.size > 0) {
      for (const st of this.pumpLater) this.pump(st);
      this.pumpLater.clear();
    }
    if (this.connToReturn > 0) {
      this.windowUpdate(0, this.connToReturn);
      this.connRecvWindow += this.connToReturn;
      this.connToReturn = 0;
    }
    for (const st of this.streams.values()) {
      if (st.toReturn > 0) {
        if (!st.remoteEnded) {
          this.windowUpdate(st.id, st.toReturn);
          st.recvWindow += st.toReturn;
        }
        st.toReturn = 0;
      }
    }
    this.flushing = false;
    const out = this.out;
    if (out.length === 0) return;
    this.out = [];
    const bytes = this.outBytes;
    this.outBytes = 0;
    if (out.length === 1) this.sock.write(out[0] as Buffer);
    else if (bytes <= 64 * 1024) this.sock.write(Buffer.concat(out, bytes));
    else {
      this.sock.cork();
      for (const b of out) this.sock.write(b);
      this.sock.uncork();
    }
    // Streams held back by frames that were waiting here (not by the socket: 'drain' frees those) go on now.
    if (this.blocked.size > 0 && this.sock.writableLength <= SOCKET_HIGH_WATER) this.drainBlocked();
  }

  private windowUpdate(id: number, n: number): void {
    this.frame(T_WINDOW_UPDATE, 0, id, u32(n));
  }

  private rstFrame(id: number, code: number): void {
    this.frame(T_RST_STREAM, 0, id, u32(code));
  }

  /** A connection error: GOAWAY with the code, then the connection closes. */
  private fail(code: number, message: string): void {
    this.opts.log.debug({ code, message }, 'HTTP/2 connection error');
    this.frame(T_GOAWAY, 0, 0, goawayPayload(this.lastStreamId, code, message));
    this.flush();
    this.closed = true;
    this.sock.end();
    this.onClose();
  }

  private onClose(): void {
    this.closed = true;
    if (this.keepalive) clearTimeout(this.keepalive);
    this.wakeDrained();
    for (const st of this.streams.values()) {
      st.call?.stop();
      st.bidi?.cancel();
      if (st.relay && !st.relay.closed) st.relay.close(E_CANCEL);
    }
    this.streams.clear();
    this.blocked.clear();
    this.pumpLater.clear();
    this.out = [];
    const backend = this.backend;
    this.backend = undefined;
    backend?.destroy();
  }
}

function goawayPayload(lastStreamId: number, code: number, message: string): Buffer {
  const b = Buffer.allocUnsafe(8 + Buffer.byteLength(message, 'latin1'));
  b.writeUInt32BE(lastStreamId, 0);
  b.writeUInt32BE(code, 4);
  b.write(message, 8, 'latin1');
  return b;
}

/** Two Duplex ends joined in memory: what one writes, the other reads, with backpressure. */
export function duplexPair(): [Duplex, Duplex] {
  const ends: Duplex[] = [];
  // waiting[i]: the other end's write callback, held until end i's reader asks for more.
  const waiting: ((() => void) | undefined)[] = [undefined, undefined];
  const make = (self: number): Duplex => {
    const other = 1 - self;
    return new Duplex({
      read() {
        const w = waiting[self];
        waiting[self] = undefined;
        w?.();
      },
      write(chunk: Buffer, _enc, cb) {
        if ((ends[other] as Duplex).push(chunk)) cb();
        else waiting[other] = () => cb();
      },
      final(cb) {
        (ends[other] as Duplex).push(null);
        cb();
      },
      destroy(err, cb) {
        const peer = ends[other];
        if (peer && !peer.destroyed) peer.destroy();
        cb(err);
      },
    });
  };
  ends.push(make(0), make(1));
  return [ends[0] as Duplex, ends[1] as Duplex];
}
