// The server side of one RFC 6455 websocket, as small as the gateway's websocket proxy needs: the
// handshake's accept key, masked client frames in (fragmented messages reassembled up to a bound, pings
// answered, close answered), unmasked text frames out. A client that declares a message over the bound
// is closed with 1009 before its payload is read; one that pings without reading the pongs stops being
// read until they have left.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** Sec-WebSocket-Accept for a client's Sec-WebSocket-Key. */
export function acceptKey(key: string): string {
  return createHash('sha1').update(key + GUID).digest('base64');
}

const OP_CONTINUATION = 0x0;
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;

export const CLOSE_PROTOCOL_ERROR = 1002;
export const CLOSE_TOO_BIG = 1009;

function frame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  const head = n < 126 ? Buffer.alloc(2) : n < 0x10000 ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = 0x80 | opcode;
  if (n < 126) head[1] = n;
  else if (n < 0x10000) {
    head[1] = 126;
    head.writeUInt16BE(n, 2);
  } else {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}

export interface WebSocketEvents {
  message: [Buffer];
  drain: [];
  close: [];
}

export class WebSocketConnection extends EventEmitter<WebSocketEvents> {
  private buf: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentBytes = 0;
  private inMessage = false;
  private closed = false;

  constructor(
    private readonly socket: Duplex,
    head: Buffer,
    private readonly maxMessageBytes: number,
  ) {
    super();
    socket.on('data', (c: Buffer) => this.received(c));
    socket.on('drain', () => this.emit('drain'));
    socket.on('error', () => socket.destroy());
    socket.once('close', () => {
      this.closed = true;
      this.emit('close');
    });
    if (head.length > 0) this.received(head);
  }

  /** Sends one text message; false when the client is behind ('drain' follows). */
  sendText(text: string): boolean {
    if (this.closed) return true;
    return this.socket.write(frame(OP_TEXT, Buffer.from(text, 'utf8')));
  }

  /** Sends a close frame with `code`, then ends the connection. */
  close(code: number): void {
    if (this.closed) return;
    const p = Buffer.alloc(2);
    p.writeUInt16BE(code);
    this.socket.end(frame(OP_CLOSE, p));
    this.closed = true;
  }

  /** Ends the connection without a close frame (what etcd's proxy does when the call is over). */
  terminate(): void {
    this.closed = true;
    this.socket.end();
  }

  private received(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    while (!this.closed && this.parseFrame());
  }

  /** Takes one whole frame from the buffer; false when more bytes are needed (or the connection closed). */
  private parseFrame(): boolean {
    const b = this.buf;
    if (b.length < 2) return false;
    const b0 = b[0] as number;
    const b1 = b[1] as number;
    const fin = (b0 & 0x80) !== 0;
    const opcode = b0 & 0x0f;
    // No extension is negotiated, so reserved bits must be clear; client frames must be masked.
    if ((b0 & 0x70) !== 0 || (b1 & 0x80) === 0) return this.fail(CLOSE_PROTOCOL_ERROR);
    let len = b1 & 0x7f;
    let at = 2;
    if (len === 126) {
      if (b.length < 4) return false;
      len = b.readUInt16BE(2);
      at = 4;
    } else if (len === 127) {
      if (b.length < 10) return false;
      const big = b.readBigUInt64BE(2);
      len = big > BigInt(this.maxMessageBytes) ? this.maxMessageBytes + 1 : Number(big);
      at = 10;
    }
    const control = opcode >= 0x8;
    if (control && (len > 125 || !fin)) return this.fail(CLOSE_PROTOCOL_ERROR);
    // Refused on the declared length, before the payload is held.
    if (!control && this.fragmentBytes + len > this.maxMessageBytes) return this.fail(CLOSE_TOO_BIG);
    if (b.length < at + 4 + len) return false;
    const mask = b.subarray(at, at + 4);
    const payload = Buffer.from(b.subarray(at + 4, at + 4 + len));
    for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] as number) ^ (mask[i & 3] as number);
    this.buf = b.subarray(at + 4 + len);
    switch (opcode) {
      case OP_PING:
        // A client that pings faster than it reads the pongs is not read until they have left.
        if (!this.socket.write(frame(OP_PONG, payload))) {
          this.socket.pause();
          this.socket.once('drain', () => this.socket.resume());
        }
        return true;
      case OP_PONG:
        return true;
      case OP_CLOSE:
        this.close(payload.length >= 2 ? payload.readUInt16BE(0) : 1000);
        return false;
      case OP_TEXT:
      case OP_BINARY:
        if (this.inMessage) return this.fail(CLOSE_PROTOCOL_ERROR);
        this.inMessage = true;
        return this.fragment(payload, fin);
      case OP_CONTINUATION:
        if (!this.inMessage) return this.fail(CLOSE_PROTOCOL_ERROR);
        return this.fragment(payload, fin);
      default:
        return this.fail(CLOSE_PROTOCOL_ERROR);
    }
  }

  private fragment(payload: Buffer, fin: boolean): boolean {
    this.fragments.push(payload);
    this.fragmentBytes += payload.length;
    if (!fin) return true;
    const msg = this.fragments.length === 1 ? payload : Buffer.concat(this.fragments);
    this.fragments = [];
    this.fragmentBytes = 0;
    this.inMessage = false;
    this.emit('message', msg);
    return true;
  }

  private fail(code: number): false {
    this.buf = Buffer.alloc(0);
    this.close(code);
    return false;
  }
}
