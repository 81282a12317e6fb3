// A raw HTTP/2 client for tests that must say things Node's client never would: frames built by hand and
// written as given (split anywhere, any number at a time), and everything the server answers parsed and
// counted. It decodes the server's header blocks with the project's HPACK decoder, which RFC 7541's own
// examples check (front.test.ts); requests are encoded without indexing, so no table state is involved.
import net from 'node:net';
import { HpackDecoder, encodeHeaders, encodeInt } from '../../../src/server/http2/hpack.js';

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const T = { DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PUSH_PROMISE: 5, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
export const F = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;
export const E = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb,
} as const;
export const S = { HEADER_TABLE_SIZE: 1, ENABLE_PUSH: 2, MAX_CONCURRENT_STREAMS: 3, INITIAL_WINDOW_SIZE: 4, MAX_FRAME_SIZE: 5, MAX_HEADER_LIST_SIZE: 6 } as const;

export function frame(type: number, flags: number, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.allocUnsafe(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(id, 5);
  return Buffer.concat([h, payload]);
}

export const u32 = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
};

export function settings(entries: readonly (readonly [number, number])[] = []): Buffer {
  const p = Buffer.allocUnsafe(entries.length * 6);
  entries.forEach(([k, v], i) => {
    p.writeUInt16BE(k, i * 6);
    p.writeUInt32BE(v >>> 0, i * 6 + 2);
  });
  return frame(T.SETTINGS, 0, 0, p);
}

export const ping = (ack = false, data: Buffer = Buffer.alloc(8)): Buffer => frame(T.PING, ack ? F.ACK : 0, 0, data);
export const rst = (id: number, code: number): Buffer => frame(T.RST_STREAM, 0, id, u32(code));
export const windowUpdate = (id: number, inc: number): Buffer => frame(T.WINDOW_UPDATE, 0, id, u32(inc));
export const priority = (id: number, dependsOn: number, weight = 16): Buffer => frame(T.PRIORITY, 0, id, Buffer.concat([u32(dependsOn), Buffer.from([weight])]));

/** A gRPC request's header block: literals without indexing, so the server's table is never touched. */
export function requestBlock(path: string, extra: readonly (readonly [string, string])[] = []): Buffer {
  return encodeHeaders([[':method', 'POST'], [':scheme', 'http'], [':path', path], [':authority', 'localhost'], ['content-type', 'application/grpc'], ['te', 'trailers'], ...extra]);
}

/** One literal field, its name a literal too: "with incremental indexing" (added to the server's table) or "without". */
export function literal(name: string, value: string | Buffer, indexing: boolean): Buffer {
  const v = Buffer.isBuffer(value) ? value : Buffer.from(value, 'latin1');
  return Buffer.concat([Buffer.from([indexing ? 0x40 : 0x00]), encodeInt(name.length, 7, 0), Buffer.from(name, 'latin1'), encodeInt(v.length, 7, 0), v]);
}

export const headers = (id: number, block: Buffer, flags: number = F.END_HEADERS): Buffer => frame(T.HEADERS, flags, id, block);

/** A header block as HEADERS and CONTINUATION frames of at most 16 KiB, as a client splits a big one. */
export function headerFrames(id: number, block: Buffer, endStream: boolean): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < block.length || at === 0; at += 16_384) parts.push(block.subarray(at, at + 16_384));
  return Buffer.concat(
    parts.map((p, i) => frame(i === 0 ? T.HEADERS : T.CONTINUATION, (i === parts.length - 1 ? F.END_HEADERS : 0) | (i === 0 && endStream ? F.END_STREAM : 0), id, p)),
  );
}

/** One gRPC message, length-prefixed. */
export function grpcMessage(msg: Buffer): Buffer {
  const out = Buffer.allocUnsafe(5 + msg.length);
  out[0] = 0;
  out.writeUInt32BE(msg.length, 1);
  msg.copy(out, 5);
  return out;
}

/** A unary call on stream `id`: HEADERS, then the message in one DATA frame that ends the stream. */
export function unaryCall(id: number, path: string, msg: Buffer): Buffer {
  return Buffer.concat([headers(id, requestBlock(path)), frame(T.DATA, F.END_STREAM, id, grpcMessage(msg))]);
}

// etcdserverpb messages by hand: field numbers from rpc.proto.
function bytesField(field: number, b: Buffer): Buffer {
  const len: number[] = [];
  for (let n = b.length; ; n = Math.floor(n / 128)) {
    if (n < 128) {
      len.push(n);
      break;
    }
    len.push((n % 128) | 0x80);
  }
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...len]), b]);
}
export const RANGE = '/etcdserverpb.KV/Range';
export const PUT = '/etcdserverpb.KV/Put';
export const WATCH = '/etcdserverpb.Watch/Watch';
export const rangeRequest = (key: string, rangeEnd?: string): Buffer =>
  rangeEnd === undefined ? bytesField(1, Buffer.from(key)) : Buffer.concat([bytesField(1, Buffer.from(key)), bytesField(2, Buffer.from(rangeEnd))]);
export const putRequest = (key: string, value: Buffer): Buffer => Buffer.concat([bytesField(1, Buffer.from(key)), bytesField(2, value)]);
export const watchCreate = (key: string): Buffer => bytesField(1, bytesField(1, Buffer.from(key)));

export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly id: number;
  readonly payload: Buffer;
}

export interface Goaway {
  readonly lastStreamId: number;
  readonly code: number;
  readonly debug: string;
}

export interface RawOptions {
  /** The client's SETTINGS after the preface; [] sends an empty one; undefined sends none. */
  readonly settings?: readonly (readonly [number, number])[] | undefined;
  /** ACK the server's SETTINGS (default true). */
  readonly ackSettings?: boolean;
  /** Keep only counts, not the frames themselves (for floods). */
  readonly keepFrames?: boolean;
}

/** One raw connection. Frames the server sends are counted by type; header blocks are decoded in order. */
export class RawH2 {
  readonly sock: net.Socket;
  readonly frames: Frame[] = [];
  readonly counts = new Map<number, number>();
  /** RST_STREAM codes the server sent, by stream. */
  readonly resets = new Map<number, number>();
  /** Decoded header blocks by stream, in order (response headers, then trailers). */
  readonly headerBlocks = new Map<number, (readonly (readonly [string, string])[])[]>();
  /** DATA bytes received, by stream. */
  readonly dataBytes = new Map<number, number>();
  readonly serverSettings: (readonly [number, number])[][] = [];
  goaway: Goaway | undefined;
  bytesIn = 0;
  bytesOut = 0;
  readonly closed: Promise<void>;
  isClosed = false;
  private buf: Buffer = Buffer.alloc(0);
  private readonly decoder = new HpackDecoder();
  private block: { id: number; parts: Buffer[] } | undefined;
  private readonly waiters = new Set<() => void>();

  private constructor(
    port: number,
    host: string,
    private readonly opts: RawOptions,
  ) {
    this.sock = net.connect(port, host);
    this.sock.setNoDelay(true);
    this.sock.on('data', (d: Buffer) => this.onData(d));
    this.sock.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      this.sock.once('close', () => {
        this.isClosed = true;
        this.wake();
        resolve();
      }),
    );
  }

  /** Connections not closed yet: a test destroys what it left open with destroyAll(). */
  private static readonly live = new Set<RawH2>();

  static destroyAll(): void {
    for (const c of RawH2.live) c.destroy();
  }

  /** Connects, sends the preface (and SETTINGS, unless told not to) and waits for the connection. */
  static async open(endpoint: string, opts: RawOptions = { settings: [] }): Promise<RawH2> {
    const u = new URL(endpoint);
    const c = new RawH2(Number(u.port), u.hostname, { ackSettings: true, keepFrames: true, ...opts });
    RawH2.live.add(c);
    void c.closed.then(() => RawH2.live.delete(c));
    await new Promise<void>((resolve, reject) => {
      c.sock.once('connect', resolve);
      c.sock.once('error', reject);
    });
    void c.send(opts.settings ? Buffer.concat([PREFACE, settings(opts.settings)]) : PREFACE);
    // The ACK of the server's SETTINGS goes out before anything the test sends, never inside a header block.
    if (c.opts.ackSettings !== false) await c.until(() => c.serverSettings.length > 0 || c.isClosed, "the server's SETTINGS");
    return c;
  }

  /** What the server lets this client send on the connection: 65,535 plus its WINDOW_UPDATEs, less the DATA sent. */
  connWindow = 65_535;

  /** send(), first waiting until the server's connection window has room for the DATA frames in `b`. */
  async sendInWindow(b: Buffer): Promise<void> {
    let data = 0;
    for (let at = 0; at + 9 <= b.length; at += 9 + b.readUIntBE(at, 3)) if (b[at + 3] === T.DATA) data += b.readUIntBE(at, 3);
    await this.until(() => this.connWindow >= data || this.isClosed || this.goaway !== undefined, 'connection window for the DATA to send');
    this.connWindow -= data;
    await this.send(b);
  }

  count(type: number): number {
    return this.counts.get(type) ?? 0;
  }

  /** Writes `b` now; resolves when the socket takes more (backpressure), or at once if it is closed. */
  send(b: Buffer): Promise<void> {
    if (this.isClosed || this.sock.destroyed) return Promise.resolve();
    this.bytesOut += b.length;
    if (this.sock.write(b)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.sock.off('drain', done);
        this.sock.off('close', done);
        resolve();
      };
      this.sock.once('drain', done);
      this.sock.once('close', done);
    });
  }

  /**
   * Writes each buffer in turn (waiting on backpressure and, for DATA, on the server's connection window),
   * stopping early once the server has sent GOAWAY or closed.
   */
  async sendAll(parts: Iterable<Buffer>): Promise<number> {
    let n = 0;
    for (const p of parts) {
      if (this.isClosed || this.goaway) break;
      await this.sendInWindow(p);
      n++;
    }
    return n;
  }

  /** Resolves once `cond` holds (checked at every frame and at close); fails after `timeoutMs` saying `what`. */
  until(cond: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!cond()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what} (closed=${this.isClosed}, goaway=${JSON.stringify(this.goaway)}, frames in: ${JSON.stringify([...this.counts])})`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  /** Waits until the server has closed the connection, reading (and counting) everything it sends. */
  async untilClosed(what: string, timeoutMs = 30_000): Promise<void> {
    await this.until(() => this.isClosed, what, timeoutMs);
  }

  /** The server answers a PING: the connection is alive and read up to here. */
  async alive(timeoutMs = 30_000): Promise<boolean> {
    if (this.isClosed) return false;
    const before = this.pingAcks;
    await this.send(ping(false, Buffer.from('liveness')));
    await this.until(() => this.pingAcks > before || this.isClosed, 'an answer to a PING', timeoutMs);
    return this.pingAcks > before;
  }

  private pingAcks = 0;

  /** The grpc-status a stream ended with, from its last header block. */
  grpcStatus(id: number): string | undefined {
    const blocks = this.headerBlocks.get(id) ?? [];
    for (let i = blocks.length - 1; i >= 0; i--) {
      const s = blocks[i]?.find(([n]) => n === 'grpc-status');
      if (s) return s[1];
    }
    return undefined;
  }

  destroy(): void {
    this.sock.destroy();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  private onData(d: Buffer): void {
    this.bytesIn += d.length;
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    let at = 0;
    while (this.buf.length - at >= 9) {
      const len = this.buf.readUIntBE(at, 3);
      if (this.buf.length - at < 9 + len) break;
      const f: Frame = {
        type: this.buf[at + 3] as number,
        flags: this.buf[at + 4] as number,
        id: this.buf.readUInt32BE(at + 5) & 0x7fffffff,
        payload: this.buf.subarray(at + 9, at + 9 + len),
      };
      at += 9 + len;
      this.onFrame(f);
    }
    this.buf = at === this.buf.length ? Buffer.alloc(0) : Buffer.from(this.buf.subarray(at));
    this.wake();
  }

  private onFrame(f: Frame): void {
    this.counts.set(f.type, this.count(f.type) + 1);
    if (this.opts.keepFrames !== false) this.frames.push({ ...f, payload: Buffer.from(f.payload) });
    switch (f.type) {
      case T.SETTINGS:
        if ((f.flags & F.ACK) === 0) {
          const entries: [number, number][] = [];
          for (let i = 0; i + 6 <= f.payload.length; i += 6) entries.push([f.payload.readUInt16BE(i), f.payload.readUInt32BE(i + 2)]);
          this.serverSettings.push(entries);
          if (this.opts.ackSettings !== false) void this.send(frame(T.SETTINGS, F.ACK, 0));
        }
        break;
      case T.PING:
        if (f.flags & F.ACK) this.pingAcks++;
        break;
      case T.GOAWAY:
        this.goaway = { lastStreamId: f.payload.readUInt32BE(0) & 0x7fffffff, code: f.payload.readUInt32BE(4), debug: f.payload.subarray(8).toString('latin1') };
        break;
      case T.WINDOW_UPDATE:
        if (f.id === 0) this.connWindow += f.payload.readUInt32BE(0) & 0x7fffffff;
        break;
      case T.RST_STREAM:
        this.resets.set(f.id, f.payload.readUInt32BE(0));
        break;
      case T.DATA:
        this.dataBytes.set(f.id, (this.dataBytes.get(f.id) ?? 0) + f.payload.length);
        break;
      case T.HEADERS:
      case T.CONTINUATION: {
        const part = f.type === T.HEADERS ? this.headersFragment(f) : f.payload;
        this.block ??= { id: f.id, parts: [] };
        this.block.parts.push(Buffer.from(part));
        if (f.flags & F.END_HEADERS) {
          const { fields } = this.decoder.decode(Buffer.concat(this.block.parts));
          const list = this.headerBlocks.get(this.block.id) ?? [];
          list.push(fields);
          this.headerBlocks.set(this.block.id, list);
          this.block = undefined;
        }
        break;
      }
    }
  }

  private headersFragment(f: Frame): Buffer {
    let start = 0;
    let end = f.payload.length;
    if (f.flags & F.PADDED) {
      end -= f.payload[0] as number;
      start = 1;
    }
    if (f.flags & F.PRIORITY) start += 5;
    return f.payload.subarray(start, end);
  }
}
