// Many responses in one HTTP/2 write. A grpc-js server stream is a Node Writable whose _write hands one
// message to the HTTP/2 stream and waits for that write to finish before taking the next, so a watch
// stream owing fifty responses for one revision made fifty HTTP/2 writes, one after another. Go's gRPC
// (etcd) frames everything pending into one write instead. Giving the Writable a _writev does the same:
// messages that queued while a write was in flight go out together, each with its own 5-byte gRPC
// prefix, in one DATA write. Only grpc-js's internals expose the HTTP/2 stream: the release is pinned
// (grpc/grpc-js-internals.ts), and a call not shaped as that release's is an error, not a slower path.
import type { ServerHttp2Stream } from 'node:http2';
import { GRPC_JS_TESTED } from './grpc-js-internals.js';

/** The part of grpc-js's BaseServerInterceptingCall (1.10+) this relies on. */
interface BaseCall {
  readonly stream: ServerHttp2Stream;
  readonly handler: { readonly serialize: (value: unknown) => Buffer };
  maybeSendMetadata(): void;
  checkCancelled(): boolean;
}

type WriteCallback = (error?: Error | null) => void;

function baseCallOf(call: object): BaseCall {
  const base = (call as { call?: Partial<BaseCall> }).call;
  const ok =
    !!base &&
    typeof base === 'object' &&
    typeof base.maybeSendMetadata === 'function' &&
    typeof base.checkCancelled === 'function' &&
    typeof base.handler?.serialize === 'function' &&
    typeof base.stream?.write === 'function';
  if (!ok) throw new Error(`a grpc-js server call is not shaped as grpc-js ${GRPC_JS_TESTED}'s (call.stream, call.handler, maybeSendMetadata)`);
  return base as BaseCall;
}

/** Frames messages as gRPC does on the wire: flag byte 0 (uncompressed), 4-byte big-endian length, bytes. */
export function frameMessages(messages: readonly Buffer[]): Buffer {
  let size = 0;
  for (const m of messages) size += 5 + m.length;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const m of messages) {
    out[at] = 0;
    out.writeUInt32BE(m.length, at + 1);
    m.copy(out, at + 5);
    at += 5 + m.length;
  }
  return out;
}

/**
 * Reads gRPC messages (frameMessages' format) back out of DATA chunks however they are split. The flag
 * byte is not looked at: a reader serves calls whose encoding is identity, where grpc-js ignores it too.
 */
export class MessageReader {
  /** Bytes of an incomplete message, as they came (joined once the message is whole). */
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** 5 + the length of the message in `parts`, once its prefix has arrived. */
  private needed = 0;

  constructor(private readonly maxBytes = Number.POSITIVE_INFINITY) {}

  /**
   * The messages this chunk completes, in order. `tooLarge` is the announced length of a message over
   * maxBytes, if one came next; nothing after it is read. A message split over many chunks is copied
   * once, when its last chunk arrives (joining at every chunk made a large message cost its size
   * squared).
   */
  push(chunk: Buffer): { messages: Buffer[]; tooLarge?: number } {
    const messages: Buffer[] = [];
    let buf = chunk;
    if (this.partBytes > 0) {
      this.parts.push(chunk);
      this.partBytes += chunk.length;
      if (this.needed === 0 && this.partBytes >= 5) {
        const head = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts, this.partBytes);
        this.parts = [head];
        const len = head.readUInt32BE(1);
        if (len > this.maxBytes) return this.refuse(messages, len);
        this.needed = 5 + len;
      }
      if (this.needed === 0 || this.partBytes < this.needed) return { messages };
      buf = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts, this.partBytes);
      this.parts = [];
      this.partBytes = 0;
      this.needed = 0;
    }
    let at = 0;
    while (buf.length - at >= 5) {
      const len = buf.readUInt32BE(at + 1);
      if (len > this.maxBytes) return this.refuse(messages, len);
      if (buf.length - at - 5 < len) {
        this.needed = 5 + len;
        break;
      }
      messages.push(buf.subarray(at + 5, at + 5 + len));
      at += 5 + len;
    }
    if (at < buf.length) {
      this.parts = [buf.subarray(at)];
      this.partBytes = buf.length - at;
    }
    return { messages };
  }

  private refuse(messages: Buffer[], len: number): { messages: Buffer[]; tooLarge: number } {
    this.parts = [];
    this.partBytes = 0;
    this.needed = 0;
    return { messages, tooLarge: len };
  }
}

/**
 * Lets a grpc-js server stream (server-streaming or bidi) send the messages that queued behind an
 * in-flight write as one HTTP/2 write.
 */
export function coalesceWrites(call: object): void {
  const base = baseCallOf(call);
  const writev = (chunks: readonly { chunk: unknown }[], callback: WriteCallback): void => {
    // grpc-js drops writes on a cancelled call; so do we, but still release the Writable.
    if (base.checkCancelled()) {
      callback();
      return;
    }
    let framed: Buffer;
    try {
      framed = frameMessages(chunks.map((c) => base.handler.serialize(c.chunk)));
    } catch (e) {
      callback(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    base.maybeSendMetadata();
    base.stream.write(framed, (err?: Error | null) => callback(err ?? null));
  };
  (call as { _writev?: unknown })._writev = writev;
}

/** Bytes gathered before write() asks the caller to stop until the batch has gone out. */
const BATCH_BYTES = 64 * 1024;

/**
 * Writes already-serialized messages straight to a grpc-js server stream's HTTP/2 stream, past the
 * Writable: every message written in one turn of the event loop leaves as one framed write at the end of
 * that turn. write() answers as a Node stream does — false means "stop until onRoom fires" — once the
 * batch is large or HTTP/2 has more buffered than its high-water mark. Status and trailers still go
 * through grpc-js (call.end() or an error), after everything written here.
 */
export class DirectWriter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private scheduled = false;
  /** HTTP/2 said its buffer is full: wait for its 'drain'. */
  private draining = false;
  /** write() returned false: the caller waits for onRoom. */
  private held = false;

  private constructor(
    private readonly base: BaseCall,
    private readonly onRoom: () => void,
  ) {}

  static for(call: object, onRoom: () => void): DirectWriter {
    return new DirectWriter(baseCallOf(call), onRoom);
  }

  write(message: Buffer): boolean {
    this.pending.push(message);
    this.pendingBytes += message.length;
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.flush());
    }
    if (this.draining || this.pendingBytes >= BATCH_BYTES) this.held = true;
    return !this.held;
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    // A closed call: grpc-js drops writes too (and has already told the handler it was cancelled).
    if (batch.length === 0 || this.base.checkCancelled()) return;
    this.base.maybeSendMetadata();
    if (!this.base.stream.write(frameMessages(batch))) {
      if (!this.draining) {
        this.draining = true;
        this.base.stream.once('drain', () => {
          this.draining = false;
          this.release();
        });
      }
      return;
    }
    if (!this.draining) this.release();
  }

  private release(): void {
    if (!this.held) return;
    this.held = false;
    this.onRoom();
  }
}
