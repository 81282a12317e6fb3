// The hot unary calls (KV Range, Put, DeleteRange, Txn) served straight off the HTTP/2 stream by the
// client port's own server (grpc/front.ts). grpc-js builds, for every call, a Metadata object from the
// headers, an interceptor chain, a read queue with a stream decoder, a call object (an EventEmitter) and a
// write path through Node streams. A unary call needs none of it: read one length-prefixed message, run
// the handler, answer with headers, one DATA frame and trailers. Linearizable reads/s rose about 25% with
// it; CPU per write under `etcdctl check perf` fell only a few per cent. Refusals go over the wire as
// grpc-js sends them — the same statuses and messages (size limit, deadline, missing or second message,
// undecodable request). An OK answer's headers and trailers are etcd's (grpc-go's): status, content type
// and grpc-status only, without the three fields grpc-js adds. Anything unusual (compressed requests, an
// unparsable grpc-timeout, another content type, any other method) is left to grpc-js.
import { status as Status } from '@grpc/grpc-js';
import { constants as h2 } from 'node:http2';
import type { IncomingHttpHeaders } from 'node:http2';
import type { CallTracker } from './call-metrics.js';
import type { WireStatus } from './wire-status.js';

/** A unary method the fast path can serve: its codecs and the handler's core (v3rpc/edge.ts unary()). */
export interface FastUnaryMethod {
  readonly path: string;
  readonly deserialize: (buf: Buffer) => unknown;
  readonly serialize: (res: unknown) => Buffer;
  /** Starts the call's counters. */
  track(): CallTracker;
  /** Admission, size check and the call itself; `metadata` is the request's headers. */
  run(req: unknown, metadata: IncomingHttpHeaders): Promise<unknown>;
  /** The status a failed run() answers with. */
  toStatus(e: unknown): WireStatus;
}

/** grpc-js's reading of grpc-timeout (server-interceptors.ts). */
const DEADLINE_REGEX = /(\d{1,8})\s*([HMSmun])/;
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

export function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The timeout in ms, null without one, undefined when grpc-js would refuse it. */
function timeoutOf(headers: IncomingHttpHeaders): number | null | undefined {
  const t = first(headers['grpc-timeout']);
  if (t === undefined) return null;
  const m = DEADLINE_REGEX.exec(t);
  if (!m) return undefined;
  return (Number(m[1]) * (UNIT_MS[m[2] as string] as number)) | 0;
}

/** Whether the fast path serves this call exactly as grpc-js would; otherwise grpc-js takes it. */
export function servable(headers: IncomingHttpHeaders): boolean {
  const ct = headers[h2.HTTP2_HEADER_CONTENT_TYPE];
  if (typeof ct !== 'string' || !ct.startsWith('application/grpc')) return false;
  const enc = first(headers['grpc-encoding']);
  if (enc !== undefined && enc !== 'identity') return false;
  return timeoutOf(headers) !== undefined;
}

/** Where a fast call's one answer goes (the client port's own server, grpc/front.ts). */
export interface UnaryAnswer {
  /** Response headers, the one response message (not yet framed), OK trailers. */
  ok(msg: Buffer): void;
  /** A trailers-only response with this status; whatever the client still sends is read and dropped. */
  status(s: WireStatus): void;
  /** True when the stream can no longer be answered (reset, closed, answered). */
  gone(): boolean;
  /**
   * Whether the answer may be made now: false when the connection already holds too much its client has
   * not read, in which case the stream was refused (see ServerStream.reserve), so no answer is encoded.
   */
  room(): boolean;
}

/** One call: collects the request message, runs the method, answers once. Its owner feeds it data and end. */
export class FastCall {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** The request's length once its 5-byte prefix has arrived. */
  private length = -1;
  private answered = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly method: FastUnaryMethod,
    private readonly answer: UnaryAnswer,
    private readonly headers: IncomingHttpHeaders,
    private readonly maxReceive: number,
  ) {
    const timeout = timeoutOf(headers);
    if (typeof timeout === 'number') {
      this.timer = setTimeout(() => this.fail({ code: Status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' }), timeout);
    }
  }

  onData(chunk: Buffer): void {
    if (this.answered) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    if (this.length < 0 && this.buffered >= 5) {
      const head = this.chunks.length === 1 ? chunk : Buffer.concat(this.chunks);
      this.length = head.readUInt32BE(1);
      if (this.maxReceive !== -1 && this.length > this.maxReceive) {
        this.fail({ code: Status.RESOURCE_EXHAUSTED, details: `Received message larger than max (${this.length} vs ${this.maxReceive})` });
        return;
      }
    }
    if (this.length >= 0 && this.buffered > 5 + this.length) {
      this.fail({ code: Status.UNIMPLEMENTED, details: `Received a second request message for server streaming method ${this.method.path}` });
    }
  }

  onEnd(): void {
    if (this.answered) return;
    if (this.length < 0 || this.buffered < 5 + this.length) {
      this.fail({ code: Status.UNIMPLEMENTED, details: `Received no request message for server streaming method ${this.method.path}` });
      return;
    }
    const all = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    this.chunks = [];
    let req: unknown;
    try {
      req = this.method.deserialize(all.subarray(5, 5 + this.length));
    } catch {
      this.fail({ code: Status.INTERNAL, details: 'Error deserializing request' });
      return;
    }
    // grpc-js reaches the handler, where counting starts, only with a decoded request.
    const tracker = this.method.track();
    tracker.received();
    this.method.run(req, this.headers).then(
      (res) => {
        tracker.sent();
        tracker.done(Status.OK);
        this.succeed(res);
      },
      (e: unknown) => {
        const s = this.method.toStatus(e);
        tracker.done(s.code);
        this.fail(s);
      },
    );
  }

  /** Like grpc-js: a reply to a call the client gave up on is dropped (it was counted all the same). */
  private succeed(res: unknown): void {
    if (!this.claim() || !this.answer.room()) return;
    let msg: Buffer;
    try {
      msg = this.method.serialize(res);
    } catch {
      this.answer.status({ code: Status.INTERNAL, details: 'Error serializing response' });
      return;
    }
    this.answer.ok(msg);
  }

  private fail(s: WireStatus): void {
    if (this.claim()) this.answer.status(s);
  }

  /** Takes the one answer this call gets; false when it was answered or the stream is gone. */
  private claim(): boolean {
    if (this.answered) return false;
    this.stop();
    return !this.answer.gone();
  }

  /** The stream is gone, or the call answered: nothing more is done for it. */
  stop(): void {
    this.answered = true;
    this.chunks = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
