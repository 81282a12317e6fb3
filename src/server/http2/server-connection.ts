// One HTTP/2 server connection (RFC 9113) read and written by hand, for the client port: Node's HTTP/2
// server costs about 85 µs of CPU per unary call on this machine (a Duplex per stream, header objects made
// and converted three times, two socket writes per response); the gRPC core on this one (grpc/front.ts)
// costs about 15. It knows no gRPC: a new stream's checked request headers go to `open`, which returns
// the stream's handler; the handler answers through the ServerStream it was given.
//
// What it implements: the preface and SETTINGS (initial window, frame size, header table size; it
// announces MAX_CONCURRENT_STREAMS and MAX_HEADER_LIST_SIZE), HEADERS with CONTINUATION, padding and
// priority, DATA, RST_STREAM, PING, GOAWAY, WINDOW_UPDATE, PRIORITY and unknown frames (checked, then
// ignored); stream states (idle, open, half-closed, closed) with their errors; flow control both ways (a
// handler may return the client's window only as it takes the data; responses wait for the client's
// windows and socket); HPACK with the client's dynamic table (http2/hpack.ts). And the limits of
// http2/limits.ts, which nghttp2 and Node's http2 carry against hostile clients. One socket write per turn
// of the event loop carries every frame ready by then.
import type { IncomingHttpHeaders } from 'node:http2';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import {
  E_COMPRESSION,
  E_ENHANCE_YOUR_CALM,
  E_FLOW_CONTROL,
  E_FRAME_SIZE,
  E_NO_ERROR,
  E_PROTOCOL,
  E_REFUSED_STREAM,
  E_STREAM_CLOSED,
  F_ACK,
  F_END_HEADERS,
  F_END_STREAM,
  F_PADDED,
  F_PRIORITY,
  FRAME_HEADER_LEN,
  HTTP2_PREFACE,
  S_ENABLE_PUSH,
  S_HEADER_TABLE_SIZE,
  S_INITIAL_WINDOW_SIZE,
  S_MAX_CONCURRENT_STREAMS,
  S_MAX_FRAME_SIZE,
  S_MAX_HEADER_LIST_SIZE,
  T_CONTINUATION,
  T_DATA,
  T_GOAWAY,
  T_HEADERS,
  T_PING,
  T_PRIORITY,
  T_PUSH_PROMISE,
  T_RST_STREAM,
  T_SETTINGS,
  T_WINDOW_UPDATE,
} from './frames.js';
import { HpackDecoder, HpackError, OkBlockEncoder } from './hpack.js';
import type { OkBlocks } from './hpack.js';
import {
  Budget,
  CLIENT_RESETS,
  CLOSE_LINGER_MS,
  DEFAULT_MAX_CONCURRENT_STREAMS,
  IDLE_FRAMES,
  MAX_CONNECTION_BUFFER,
  MAX_CONTINUATIONS,
  MAX_HEADER_BLOCK,
  MAX_HEADER_LIST_PAIRS,
  MAX_HEADER_LIST_SIZE,
  MAX_SETTINGS_ENTRIES,
  MAX_UNSENT_CONTROL_FRAMES,
  REFUSED_STREAMS,
  SMALL_WINDOW_UPDATE,
} from './limits.js';
import { requestHeaders, trailersMalformed } from './request-headers.js';

const DEFAULT_WINDOW = 65_535;
const MAX_WINDOW = 2 ** 31 - 1;
/** The frame size this side accepts (the protocol's default; it announces no other). */
const MAX_RECEIVE_FRAME = 16_384;
/** What a stream may hold queued before write() says to wait (unless its handler sets another mark). */
const DEFAULT_HIGH_WATER = 64 * 1024;
/** DATA waits, whatever the windows say, while this much is still to be written to a slow socket. */
const SOCKET_HIGH_WATER = 4 * 1024 * 1024;
/** In-place writes (pushInPlace) go into buffers of this size, one after another. */
const STAGE_BYTES = 16 * 1024;
/** Streams this side reset, remembered so that the frames the client had already sent on them are ignored. */
const RECENT_RESETS = 1024;
/**
 * Bytes read from one connection per turn of the event loop. libuv reads a socket up to 32 times in one
 * turn (2 MiB), which for a client packing thousands of requests into it would hold the loop for tens of
 * milliseconds: past this much, the socket is paused until the turn's other work (timers: Raft's ticks)
 * has run.
 */
const READ_PER_TURN = 64 * 1024;
/** Streams opened per turn of the event loop: past this many, the socket is paused as for READ_PER_TURN. */
const STREAMS_PER_TURN = 100;

/** A 4-byte big-endian payload (WINDOW_UPDATE's increment, RST_STREAM's error code). */
function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
}

/**
 * A header block to send: encoded bytes, or one of the two blocks of the connection's OkBlocks (an OK
 * response's headers and trailers), encoded when they go out since they use the client's dynamic table.
 */
export type Block = Buffer | 'ok-headers' | 'ok-trailers';

/** What the connection tells a stream's handler. */
export interface StreamHandler {
  /** Runs once the handler is the stream's, before any data is delivered. */
  start?(): void;
  /** Request data, padding taken off (never empty). */
  data(chunk: Buffer, flowBytes: number): void;
  /** The client ended its side (END_STREAM, or trailers). */
  end(): void;
  /** The stream is gone: reset by the client, or its connection closed. Not called after this side reset it. */
  reset(): void;
  /** The stream's queue fell below half its high water after a write that returned false. */
  room?(): void;
  /** The client's stream window is given back only through consumed(), as the handler takes the data. */
  readonly manualWindow?: boolean;
  /** A call that ends on its own: a stopping port's GOAWAY waits for it. */
  readonly drains?: boolean;
  /** Once this side has ended the stream, what the client still sends on it is refused (RST_STREAM NO_ERROR). */
  readonly resetAfterEnd?: boolean;
  /** Queued bytes past which write() and push() return false (64 KiB unless given). */
  readonly highWater?: number;
}

/** One stream as its handler sees it: how to answer. */
export interface ServerStream {
  readonly id: number;
  /** Response headers; with `endStream`, a response of headers alone. */
  headers(block: Block, endStream: boolean): void;
  /**
   * A whole response at once: headers, the body's pieces, trailers. Refused with RST_STREAM
   * ENHANCE_YOUR_CALM when the connection is full() (its other streams hold more than
   * MAX_CONNECTION_BUFFER unsent: a client that does not read).
   */
  respond(headers: Block, body: readonly Buffer[], trailers: Block): void;
  /**
   * Whether an answer may be made now: false, and the stream refused with RST_STREAM ENHANCE_YOUR_CALM,
   * when the connection is full() (more than MAX_CONNECTION_BUFFER unsent besides its largest answer),
   * so that a client that does not read costs no more answers.
   */
  reserve(): boolean;
  /** Data, sent from now as the windows allow; false when the stream is past its high water (room() follows). */
  write(data: Buffer): boolean;
  /** Data sent when the current callback is done, with all else pushed meanwhile, in as few DATA frames as fit. */
  push(data: Buffer): boolean;
  /** push() of `length` bytes that `fill` writes in place at buf[at]. */
  pushInPlace(length: number, fill: (buf: Buffer, at: number) => void): boolean;
  /** Ends the stream after its queued data: with trailers, or an empty DATA frame with END_STREAM. */
  end(trailers?: Block): void;
  reset(code: number): void;
  /** Gives the client back `n` bytes of its window on this stream (handlers with manualWindow). */
  consumed(n: number): void;
  /** True once nothing more can be sent: ended, ending, reset or gone. */
  readonly over: boolean;
  readonly headersSent: boolean;
}

export interface ServerConnectionOptions {
  readonly log: Logger;
  /** The two fields of the response sent most (see OkBlocks); 'ok-headers' and 'ok-trailers' send them. */
  readonly okBlocks: OkBlocks;
  /** Concurrent streams a client may open (--max-concurrent-streams). */
  readonly maxConcurrentStreams?: number;
  /** After this long without a frame from the client, PING it (etcd's --grpc-keepalive-interval, 2 h)... */
  readonly keepaliveTimeMs: number;
  /** ...and close the connection if the answer takes longer than this (--grpc-keepalive-timeout, 20 s). */
  readonly keepaliveTimeoutMs: number;
  /**
   * A new stream with its checked request headers: returns the stream's handler, which starts (start())
   * once it is the stream's. It must not answer the stream before that.
   */
  open(stream: ServerStream, request: IncomingHttpHeaders): StreamHandler;
  /** The connection is gone (after every stream's handler was told). */
  onClose?(): void;
}

/** A served connection, as the client port sees it when it stops. */
export interface ServerConnection {
  /**
   * Sends GOAWAY (no new streams; those already open go on) and resolves once no stream whose handler
   * drains is left. Others (watches, keep-alives) never end on their own: they end with the connection.
   */
  goaway(): Promise<void>;
}

class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Sets no handler: the stream is being opened. */
const OPENING: StreamHandler = { data() {}, end() {}, reset() {} };

class Stream implements ServerStream {
  handler: StreamHandler = OPENING;
  sendWindow: number;
  /** DATA payload waiting for window, then the trailers block (or an empty END_STREAM) to follow it. */
  readonly queue: Buffer[] = [];
  queued = 0;
  trailers: Block | undefined;
  endQueued = false;
  remoteEnded: boolean;
  localEnded = false;
  headersSent = false;
  /** write() returned false: room() is due once the queue drains. */
  wantRoom = false;
  /** Stream-window bytes the client used that this side has not given back yet. */
  toReturn = 0;
  /** What the client may still send on this stream before a WINDOW_UPDATE. */
  recvWindow = DEFAULT_WINDOW;
  /** Bytes pushed in place: stageFrom to stageAt are counted in `queued` but not yet in `queue`. */
  stage: Buffer | undefined;
  stageFrom = 0;
  stageAt = 0;

  constructor(
    readonly id: number,
    private readonly conn: Http2ServerConnection,
    sendWindow: number,
    remoteEnded: boolean,
  ) {
    this.sendWindow = sendWindow;
    this.remoteEnded = remoteEnded;
  }

  get over(): boolean {
    return this.localEnded || this.endQueued || !this.conn.owns(this);
  }

  headers(block: Block, endStream: boolean): void {
    if (this.over) return;
    this.headersSent = true;
    this.conn.headers(this.id, block, endStream);
    if (endStream) {
      this.localEnded = true;
      this.conn.maybeForget(this);
    }
  }

  reserve(): boolean {
    if (this.over) return false;
    if (!this.conn.full()) return true;
    this.conn.refuse(this, E_ENHANCE_YOUR_CALM, 'connection buffer full');
    return false;
  }

  respond(headers: Block, body: readonly Buffer[], trailers: Block): void {
    if (this.over) return;
    // Refused only when the client already leaves that much unread: an answer is built before it gets here,
    // so refusing it saves nothing, and one answer may be larger than the bound (a 500,000-key delete's
    // prev_kvs: etcd sends answers up to 2 GiB).
    if (this.conn.full()) return this.conn.refuse(this, E_ENHANCE_YOUR_CALM, 'connection buffer full');
    this.headers(headers, false);
    for (const b of body) {
      if (b.length === 0) continue;
      this.queue.push(b);
      this.add(b.length);
    }
    this.end(trailers);
  }

  write(data: Buffer): boolean {
    if (this.over) return true;
    if (data.length > 0) {
      this.queue.push(data);
      this.add(data.length);
      this.conn.pump(this);
    }
    return this.belowHighWater();
  }

  push(data: Buffer): boolean {
    if (this.over) return true;
    this.sealStage();
    this.queue.push(data);
    this.add(data.length);
    this.conn.pumpSoon(this);
    return this.belowHighWater();
  }

  pushInPlace(length: number, fill: (buf: Buffer, at: number) => void): boolean {
    if (this.over) return true;
    let b = this.stage;
    if (!b || b.length - this.stageAt < length) {
      this.sealStage();
      b = this.stage = Buffer.allocUnsafe(Math.max(STAGE_BYTES, length));
      this.stageFrom = this.stageAt = 0;
    }
    fill(b, this.stageAt);
    this.stageAt += length;
    this.add(length);
    this.conn.pumpSoon(this);
    return this.belowHighWater();
  }

  end(trailers?: Block): void {
    if (this.over) return;
    this.trailers = trailers;
    this.endQueued = true;
    this.conn.pump(this);
  }

  reset(code: number): void {
    if (this.conn.owns(this)) this.conn.resetStream(this, code);
  }

  consumed(n: number): void {
    this.conn.returnStreamWindow(this, n);
  }

  /** Moves the bytes pushed in place so far into the queue, behind what is there. */
  sealStage(): void {
    if (this.stageAt === this.stageFrom) return;
    this.queue.push((this.stage as Buffer).subarray(this.stageFrom, this.stageAt));
    this.stageFrom = this.stageAt;
  }

  /** Drops what is queued (the stream is gone). */
  clear(): void {
    this.conn.unqueued(this.queued);
    this.queue.length = 0;
    this.queued = 0;
    this.stage = undefined;
    this.stageFrom = this.stageAt = 0;
  }

  private add(n: number): void {
    this.queued += n;
    this.conn.unqueued(-n);
  }

  private belowHighWater(): boolean {
    if (this.queued < (this.handler.highWater ?? DEFAULT_HIGH_WATER)) return true;
    this.wantRoom = true;
    return false;
  }
}

/**
 * Serves one client connection that opened with the HTTP/2 preface. `head` holds the bytes already read
 * (the preface at least); the socket must be paused.
 */
export function serveHttp2(sock: Socket, head: Buffer, opts: ServerConnectionOptions): ServerConnection {
  const conn = new Http2ServerConnection(sock, opts);
  conn.start(head);
  return conn;
}

class Http2ServerConnection implements ServerConnection {
  private buf: Buffer = Buffer.alloc(0);
  private prefaceLeft = HTTP2_PREFACE.length;
  private readonly streams = new Map<number, Stream>();
  private lastStreamId = 0;
  private readonly decoder = new HpackDecoder();
  /** A header block being continued: its stream, flags, pieces, bytes and CONTINUATION frames so far. */
  private continuing: { id: number; endStream: boolean; parts: Buffer[]; size: number; frames: number } | undefined;
  private readonly maxStreams: number;
  private peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxFrame = 16_384;
  /** This side's view of the client's HPACK dynamic table, for OK headers and trailers. */
  private readonly okBlocks: OkBlockEncoder;
  private connSendWindow = DEFAULT_WINDOW;
  /** Connection-window bytes the client used that this side has not given back yet. */
  private connToReturn = 0;
  /** What the client may still send on the connection before a WINDOW_UPDATE. */
  private connRecvWindow = DEFAULT_WINDOW;
  /** Streams with data waiting for window, in the order they started waiting. */
  private readonly blocked = new Set<Stream>();
  /** Streams whose pushed data of this turn goes out at the flush, several pieces to a DATA frame. */
  private readonly pumpLater = new Set<Stream>();
  /** DATA bytes queued in streams, not yet framed. */
  private queuedAll = 0;
  private out: Buffer[] = [];
  private outBytes = 0;
  private flushScheduled = false;
  private microFlushScheduled = false;
  /** Inside flush(): frames added now go out with it. */
  private flushing = false;
  private closed = false;
  /** Whether a frame came in since the keepalive timer last looked. */
  private heard = false;
  private keepalive: NodeJS.Timeout | undefined;
  private goingAway = false;
  private drained: (() => void)[] = [];
  private settingsSeen = 0;
  /** Bytes read in this turn of the event loop (see READ_PER_TURN). */
  private readThisTurn = 0;
  private openedThisTurn = 0;
  /** Reading is held until the next turn (yieldTurn). */
  private yielding = false;
  /** Control frames queued while the socket still held unsent bytes (reset when it drains). */
  private unsentControl = 0;
  private readonly idleFrames = new Budget(IDLE_FRAMES);
  private readonly clientResets = new Budget(CLIENT_RESETS);
  private readonly refusals = new Budget(REFUSED_STREAMS);
  /** Streams this side reset, oldest first (see RECENT_RESETS). */
  private readonly recentResets = new Set<number>();

  constructor(
    private readonly sock: Socket,
    private readonly opts: ServerConnectionOptions,
  ) {
    this.maxStreams = opts.maxConcurrentStreams ?? DEFAULT_MAX_CONCURRENT_STREAMS;
    this.okBlocks = new OkBlockEncoder(opts.okBlocks);
  }

  start(head: Buffer): void {
    const s = Buffer.allocUnsafe(12);
    s.writeUInt16BE(S_MAX_CONCURRENT_STREAMS, 0);
    s.writeUInt32BE(this.maxStreams, 2);
    s.writeUInt16BE(S_MAX_HEADER_LIST_SIZE, 6);
    s.writeUInt32BE(MAX_HEADER_LIST_SIZE, 8);
    this.frame(T_SETTINGS, 0, 0, s);
    this.sock.on('data', (chunk: Buffer) => this.onData(chunk));
    this.sock.on('error', () => this.sock.destroy());
    this.sock.on('close', () => this.onClose());
    this.sock.on('drain', () => {
      this.unsentControl = 0;
      this.drainBlocked();
    });
    this.onData(head);
    if (!this.yielding) this.sock.resume();
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
    for (const st of this.streams.values()) if (st.handler.drains === true && !st.localEnded) n++;
    return n;
  }

  owns(st: Stream): boolean {
    return !this.closed && this.streams.get(st.id) === st;
  }

  /** Unsent bytes the connection holds: framed, in the socket, and queued in streams. */
  buffered(): number {
    return this.outBytes + this.sock.writableLength + this.queuedAll;
  }

  /**
   * Whether the connection holds too much unsent to take more work: more than MAX_CONNECTION_BUFFER
   * besides its largest answer in flight. One answer may be larger than the bound (a 500,000-key
   * delete's prev_kvs; etcd sends answers up to 2 GiB), and a client reading it slowly still gets its
   * small answers on the same connection, as it does from etcd; one that reads nothing gets at most
   * that answer and the bound more.
   */
  full(): boolean {
    const total = this.buffered();
    if (total <= MAX_CONNECTION_BUFFER) return false;
    let largest = 0;
    for (const st of this.streams.values()) if (st.queued > largest) largest = st.queued;
    return total - largest > MAX_CONNECTION_BUFFER;
  }

  unqueued(n: number): void {
    this.queuedAll -= n;
  }

  // ---- reading ----

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.heard = true;
    this.readThisTurn += chunk.length;
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    this.process();
    if (this.readThisTurn >= READ_PER_TURN) this.yieldTurn();
  }

  /** Handles the complete frames read so far, unless this turn's share is used up (see yieldTurn). */
  private process(): void {
    try {
      if (this.prefaceLeft > 0) {
        if (this.buf.length < this.prefaceLeft) return;
        this.buf = this.buf.subarray(this.prefaceLeft);
        this.prefaceLeft = 0;
      }
      let pos = 0;
      const b = this.buf;
      while (b.length - pos >= FRAME_HEADER_LEN && !this.yielding) {
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

  /**
   * Takes no more from this client in this turn of the event loop (frames already read wait in `buf`),
   * so that the turn's other work (timers: Raft's ticks) runs; the next turn goes on where this stopped.
   */
  private yieldTurn(): void {
    if (this.yielding) return;
    this.yielding = true;
    this.sock.pause();
    setImmediate(() => {
      this.yielding = false;
      this.readThisTurn = 0;
      this.openedThisTurn = 0;
      if (!this.closed) this.process();
      // Closed too: what the client still sends is read and dropped (see fail()).
      if (!this.yielding) this.sock.resume();
    });
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
        if (id === 0) throw new ConnectionError(E_PROTOCOL, 'RST_STREAM on stream 0');
        if (p.length !== 4) throw new ConnectionError(E_FRAME_SIZE, 'RST_STREAM size');
        return this.onReset(id);
      case T_SETTINGS:
        return this.onSettings(flags, id, p);
      case T_PING:
        if (id !== 0) throw new ConnectionError(E_PROTOCOL, 'PING on a stream');
        if (p.length !== 8) throw new ConnectionError(E_FRAME_SIZE, 'PING size');
        if ((flags & F_ACK) === 0) this.control(T_PING, F_ACK, 0, Buffer.from(p));
        return;
      case T_GOAWAY:
        if (id !== 0) throw new ConnectionError(E_PROTOCOL, 'GOAWAY on a stream');
        return; // the client opens no more streams; it closes the connection when it is done
      case T_WINDOW_UPDATE:
        return this.onWindowUpdate(id, p);
      case T_PUSH_PROMISE:
        throw new ConnectionError(E_PROTOCOL, 'PUSH_PROMISE from a client');
      case T_PRIORITY:
        return this.onPriority(id, p);
      default:
        return this.idle('unknown frame types'); // ignored (§5.5)
    }
  }

  /** One more frame that asks for work and carries nothing; too many of them end the connection. */
  private idle(what: string): void {
    if (!this.idleFrames.take()) throw new ConnectionError(E_ENHANCE_YOUR_CALM, `too many frames that do nothing (${what})`);
  }

  /** A stream id the client has not opened yet (or an even one, which a client never may): idle (§5.1). */
  private isIdle(id: number): boolean {
    return id > this.lastStreamId || id % 2 === 0;
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

  private onPriority(id: number, p: Buffer): void {
    if (id === 0) throw new ConnectionError(E_PROTOCOL, 'PRIORITY on stream 0');
    this.idle('PRIORITY');
    const st = this.streams.get(id);
    if (p.length !== 5) {
      if (st) this.refuse(st, E_FRAME_SIZE, 'PRIORITY size');
      else this.rstFrame(id, E_FRAME_SIZE);
      return;
    }
    // Priorities are not acted on (§5.3.2); a stream depending on itself is still an error (RFC 7540 §5.3.1).
    if ((p.readUInt32BE(0) & 0x7fffffff) === id && st) this.refuse(st, E_PROTOCOL, 'stream depends on itself');
  }

  private onDataFrame(flags: number, id: number, p: Buffer): void {
    if (id === 0) throw new ConnectionError(E_PROTOCOL, 'DATA on stream 0');
    if (this.isIdle(id)) throw new ConnectionError(E_PROTOCOL, 'DATA on an idle stream');
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
    const data = this.unpad(flags, p, false);
    const end = (flags & F_END_STREAM) !== 0;
    if (data.length === 0 && !end) this.idle('empty DATA frames');
    const st = this.streams.get(id);
    if (!st) return this.idle('frames on closed streams'); // closed: dropped (§5.1), its window counted above
    if (st.remoteEnded) return this.refuse(st, E_STREAM_CLOSED, 'DATA after END_STREAM');
    st.recvWindow -= p.length;
    if (st.recvWindow < 0) return this.refuse(st, E_FLOW_CONTROL, 'DATA past the stream window');
    if (end) st.remoteEnded = true;
    const h = st.handler;
    if (data.length > 0 && !st.localEnded) h.data(data, p.length);
    // A handler that takes data as it goes gives the window back itself, as it takes each chunk.
    if (!h.manualWindow || data.length === 0 || st.localEnded) this.returnStreamWindow(st, p.length);
    if (end && this.owns(st)) h.end();
    if (this.owns(st)) this.maybeForget(st);
  }

  returnStreamWindow(st: Stream, n: number): void {
    if (st.remoteEnded || !this.owns(st)) return;
    st.toReturn += n;
    this.scheduleFlush();
  }

  private onHeaders(flags: number, id: number, p: Buffer): void {
    if (id === 0) throw new ConnectionError(E_PROTOCOL, 'HEADERS on stream 0');
    if (id % 2 === 0) throw new ConnectionError(E_PROTOCOL, 'even stream id from a client');
    const block = this.unpad(flags, p, true);
    if (flags & F_PRIORITY && (p.readUInt32BE(flags & F_PADDED ? 1 : 0) & 0x7fffffff) === id) {
      // A stream depending on itself: the block is still decoded (the table must follow), the stream refused.
      this.decoder.decode(block, 0, 0);
      throw new ConnectionError(E_PROTOCOL, 'stream depends on itself');
    }
    const endStream = (flags & F_END_STREAM) !== 0;
    if ((flags & F_END_HEADERS) === 0) {
      if (block.length > MAX_HEADER_BLOCK) throw new ConnectionError(E_ENHANCE_YOUR_CALM, 'header block too large');
      this.continuing = { id, endStream, parts: [Buffer.from(block)], size: block.length, frames: 0 };
      return;
    }
    this.onHeaderBlock(id, endStream, block);
  }

  private onContinuation(flags: number, id: number, p: Buffer): void {
    const c = this.continuing;
    if (!c || c.id !== id) throw new ConnectionError(E_PROTOCOL, 'unexpected CONTINUATION');
    // Counted and bounded whatever they carry: empty ones would otherwise go on for ever.
    if (++c.frames > MAX_CONTINUATIONS) throw new ConnectionError(E_ENHANCE_YOUR_CALM, 'too many CONTINUATION frames');
    c.size += p.length;
    if (c.size > MAX_HEADER_BLOCK) throw new ConnectionError(E_ENHANCE_YOUR_CALM, 'header block too large');
    if (p.length > 0) c.parts.push(Buffer.from(p));
    if ((flags & F_END_HEADERS) === 0) return;
    this.continuing = undefined;
    this.onHeaderBlock(id, c.endStream, c.parts.length === 1 ? (c.parts[0] as Buffer) : Buffer.concat(c.parts, c.size));
  }

  private onHeaderBlock(id: number, endStream: boolean, block: Buffer): void {
    // Decoded whatever becomes of the stream: the table must follow the client's encoder.
    const { fields, tooLarge } = this.decoder.decode(block, MAX_HEADER_LIST_PAIRS, MAX_HEADER_LIST_SIZE);
    const st = this.streams.get(id);
    if (st) {
      // Trailers from the client end its side of the stream; gRPC requests carry none worth keeping.
      if (st.remoteEnded) return this.refuse(st, E_STREAM_CLOSED, 'HEADERS after END_STREAM');
      if (!endStream || tooLarge || trailersMalformed(fields) !== undefined) return this.refuse(st, E_PROTOCOL, 'malformed trailers');
      st.remoteEnded = true;
      st.handler.end();
      if (this.owns(st)) this.maybeForget(st);
      return;
    }
    if (!this.isIdle(id)) {
      // A stream this side reset may still get what the client sent before it knew (§5.4.2); any other
      // closed stream may not.
      if (this.recentResets.has(id)) return;
      throw new ConnectionError(E_STREAM_CLOSED, 'HEADERS on a closed stream');
    }
    this.lastStreamId = id;
    if (this.goingAway) return; // past the GOAWAY's last stream id: the client retries it elsewhere
    if (tooLarge) return this.refuseNew(id, E_ENHANCE_YOUR_CALM, 'header list too large');
    if (this.streams.size >= this.maxStreams) return this.refuseNew(id, E_REFUSED_STREAM, 'too many concurrent streams');
    if (this.full()) return this.refuseNew(id, E_ENHANCE_YOUR_CALM, 'connection buffer full');
    const request = requestHeaders(fields);
    if (typeof request === 'string') return this.refuseNew(id, E_PROTOCOL, request);
    if (++this.openedThisTurn >= STREAMS_PER_TURN) this.yieldTurn();
    const st2 = new Stream(id, this, this.peerInitialWindow, endStream);
    this.streams.set(id, st2);
    const h = this.opts.open(st2, request);
    st2.handler = h;
    h.start?.();
    if (endStream && this.owns(st2)) h.end();
    if (this.owns(st2)) this.maybeForget(st2);
  }

  private onReset(id: number): void {
    if (this.isIdle(id)) throw new ConnectionError(E_PROTOCOL, 'RST_STREAM on an idle stream');
    const st = this.streams.get(id);
    if (!st) return this.idle('frames on closed streams');
    // Rapid Reset: each stream opened and reset at once costs this side its call; the rate is bounded.
    if (!st.localEnded && !this.clientResets.take()) throw new ConnectionError(E_ENHANCE_YOUR_CALM, 'too many streams reset by the client');
    st.localEnded = true;
    st.remoteEnded = true;
    this.forget(st);
    st.handler.reset();
  }

  private onSettings(flags: number, id: number, p: Buffer): void {
    if (id !== 0) throw new ConnectionError(E_PROTOCOL, 'SETTINGS on a stream');
    if (flags & F_ACK) {
      if (p.length !== 0) throw new ConnectionError(E_FRAME_SIZE, 'SETTINGS ACK with a payload');
      return;
    }
    if (p.length % 6 !== 0) throw new ConnectionError(E_FRAME_SIZE, 'SETTINGS size');
    if (p.length / 6 > MAX_SETTINGS_ENTRIES) throw new ConnectionError(E_ENHANCE_YOUR_CALM, 'too many settings in one frame');
    // A client sends its settings once or twice; a stream of them is a flood (CVE-2019-9515).
    if (++this.settingsSeen > 2) this.idle('SETTINGS');
    let window: number | undefined;
    for (let i = 0; i < p.length; i += 6) {
      const key = p.readUInt16BE(i);
      const value = p.readUInt32BE(i + 2);
      if (key === S_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) throw new ConnectionError(E_FLOW_CONTROL, 'initial window too large');
        window = value;
      } else if (key === S_MAX_FRAME_SIZE) {
        if (value < 16_384 || value > 16_777_215) throw new ConnectionError(E_PROTOCOL, 'max frame size out of range');
        this.peerMaxFrame = value;
      } else if (key === S_HEADER_TABLE_SIZE) {
        this.okBlocks.peerTableSize(value);
      } else if (key === S_ENABLE_PUSH) {
        if (value > 1) throw new ConnectionError(E_PROTOCOL, 'ENABLE_PUSH other than 0 or 1');
      }
    }
    if (window !== undefined && window !== this.peerInitialWindow) {
      // Applied once per frame, whatever it repeats; no stream's window may pass 2^31-1 by it (§6.9.2).
      const delta = window - this.peerInitialWindow;
      for (const st of this.streams.values()) {
        if (st.sendWindow + delta > MAX_WINDOW) throw new ConnectionError(E_FLOW_CONTROL, 'initial window change overflows a stream window');
      }
      this.peerInitialWindow = window;
      for (const st of this.streams.values()) st.sendWindow += delta;
    }
    this.control(T_SETTINGS, F_ACK, 0, Buffer.alloc(0));
    this.drainBlocked();
  }

  private onWindowUpdate(id: number, p: Buffer): void {
    if (p.length !== 4) throw new ConnectionError(E_FRAME_SIZE, 'WINDOW_UPDATE size');
    const inc = p.readUInt32BE(0) & 0x7fffffff;
    if (inc < SMALL_WINDOW_UPDATE) this.idle('small WINDOW_UPDATEs');
    if (id === 0) {
      if (inc === 0) throw new ConnectionError(E_PROTOCOL, 'zero window increment');
      this.connSendWindow += inc;
      if (this.connSendWindow > MAX_WINDOW) throw new ConnectionError(E_FLOW_CONTROL, 'connection window overflow');
    } else {
      if (this.isIdle(id)) throw new ConnectionError(E_PROTOCOL, 'WINDOW_UPDATE on an idle stream');
      const st = this.streams.get(id);
      if (!st) return; // a closed stream's window may still be updated (§6.9)
      if (inc === 0) return this.refuse(st, E_PROTOCOL, 'zero window increment');
      st.sendWindow += inc;
      if (st.sendWindow > MAX_WINDOW) return this.refuse(st, E_FLOW_CONTROL, 'stream window overflow');
    }
    this.drainBlocked();
  }

  // ---- refusing ----

  /** Resets a stream for the client's fault; a client that earns too many is cut off. */
  refuse(st: Stream, code: number, why: string): void {
    this.opts.log.debug({ stream: st.id, code, why }, 'HTTP/2 stream refused');
    this.resetStream(st, code);
    st.handler.reset();
    if (!this.refusals.take()) this.fail(E_ENHANCE_YOUR_CALM, `too many streams refused (${why})`);
  }

  /** refuse() for a stream never opened. */
  private refuseNew(id: number, code: number, why: string): void {
    this.opts.log.debug({ stream: id, code, why }, 'HTTP/2 stream refused');
    this.rstFrame(id, code);
    this.rememberReset(id);
    if (!this.refusals.take()) throw new ConnectionError(E_ENHANCE_YOUR_CALM, `too many streams refused (${why})`);
  }

  private rememberReset(id: number): void {
    this.recentResets.add(id);
    if (this.recentResets.size > RECENT_RESETS) this.recentResets.delete(this.recentResets.values().next().value as number);
  }

  // ---- writing ----

  private frame(type: number, flags: number, id: number, payload: Buffer): void {
    if (this.closed) return;
    this.frameHeader(type, flags, id, payload.length);
    if (payload.length > 0) this.out.push(payload);
  }

  /**
   * A frame the client's own frames ask for (PING and SETTINGS acknowledgements, RST_STREAM). While the
   * socket still holds what was sent before, the client is not reading: only so many may wait behind it.
   */
  private control(type: number, flags: number, id: number, payload: Buffer): void {
    if (this.sock.writableLength > 0 && ++this.unsentControl > MAX_UNSENT_CONTROL_FRAMES) {
      return this.fail(E_ENHANCE_YOUR_CALM, 'too many control frames waiting for a client that does not read');
    }
    this.frame(type, flags, id, payload);
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
  headers(id: number, b: Block, endStream: boolean): void {
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

  /** A stream's pushed data goes out at this turn's flush (a microtask: once the writing callback is done). */
  pumpSoon(st: Stream): void {
    this.pumpLater.add(st);
    this.scheduleFlushSoon();
  }

  /**
   * Sends what the windows allow of a stream's queue, then its end once the queue is empty. Queued pieces
   * share a DATA frame up to the room there is (a stream's pushes of one turn go out together).
   */
  pump(st: Stream): void {
    st.sealStage();
    while (st.queued > 0) {
      const room = Math.min(st.sendWindow, this.connSendWindow, this.peerMaxFrame);
      if (room <= 0 || this.outBytes + this.sock.writableLength > SOCKET_HIGH_WATER) {
        this.blocked.add(st);
        return;
      }
      const size = Math.min(room, st.queued);
      st.queued -= size;
      this.queuedAll -= size;
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
    if (st.wantRoom && st.queued < (st.handler.highWater ?? DEFAULT_HIGH_WATER) / 2) {
      st.wantRoom = false;
      const h = st.handler;
      queueMicrotask(() => h.room?.());
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

  resetStream(st: Stream, code: number): void {
    this.control(T_RST_STREAM, 0, st.id, u32(code));
    this.rememberReset(st.id);
    st.localEnded = true;
    st.remoteEnded = true;
    this.forget(st);
  }

  maybeForget(st: Stream): void {
    if (st.handler.resetAfterEnd && st.localEnded && !st.remoteEnded) {
      // A call this side ended while the client may still send: the rest of its stream is not wanted.
      this.rstFrame(st.id, E_NO_ERROR);
      this.rememberReset(st.id);
      st.remoteEnded = true;
    }
    if (st.localEnded && st.remoteEnded) this.forget(st);
    else if (this.drained.length > 0 && this.pendingCalls() === 0) this.wakeDrained();
  }

  private forget(st: Stream): void {
    if (this.streams.get(st.id) === st) this.streams.delete(st.id);
    this.blocked.delete(st);
    this.pumpLater.delete(st);
    st.clear();
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

  /**
   * Pushed data goes out once the callback writing it is done (its microtasks), not a turn of the event
   * loop later: the writers (watch pumps) already run in an immediate, after the commit that made the
   * events, and a flush scheduled from there waited for the next turn's I/O callbacks.
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
    this.writeOut();
    // Streams held back by frames that were waiting here (not by the socket: 'drain' frees those) go on now.
    if (this.blocked.size > 0 && this.sock.writableLength <= SOCKET_HIGH_WATER) this.drainBlocked();
  }

  private writeOut(): void {
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
    if (this.sock.writableLength === 0) this.unsentControl = 0;
  }

  private windowUpdate(id: number, n: number): void {
    this.frame(T_WINDOW_UPDATE, 0, id, u32(n));
  }

  private rstFrame(id: number, code: number): void {
    this.control(T_RST_STREAM, 0, id, u32(code));
  }

  /**
   * A connection error: GOAWAY with the code, then the connection closes once what was queued before it
   * is written. The client's further bytes are read and dropped (unread bytes would turn the close into a
   * reset, losing the GOAWAY); a client that never reads loses its connection after CLOSE_LINGER_MS.
   */
  private fail(code: number, message: string): void {
    if (this.closed) return;
    this.opts.log.debug({ code, message }, 'HTTP/2 connection error');
    this.continuing = undefined;
    this.frame(T_GOAWAY, 0, 0, goawayPayload(this.lastStreamId, code, message));
    this.writeOut();
    this.sock.end();
    this.sock.resume();
    setTimeout(() => this.sock.destroy(), CLOSE_LINGER_MS).unref();
    this.onClose();
  }

  private onClose(): void {
    if (this.closed && this.streams.size === 0) return;
    this.closed = true;
    if (this.keepalive) clearTimeout(this.keepalive);
    this.wakeDrained();
    const open = [...this.streams.values()];
    this.streams.clear();
    this.blocked.clear();
    this.pumpLater.clear();
    this.out = [];
    this.outBytes = 0;
    for (const st of open) {
      st.clear();
      st.handler.reset();
    }
    this.opts.onClose?.();
  }
}

function goawayPayload(lastStreamId: number, code: number, message: string): Buffer {
  const b = Buffer.allocUnsafe(8 + Buffer.byteLength(message, 'latin1'));
  b.writeUInt32BE(lastStreamId, 0);
  b.writeUInt32BE(code, 4);
  b.write(message, 8, 'latin1');
  return b;
}
