// The hot unary calls (KV Range, Put, DeleteRange, Txn) served straight off the HTTP/2 stream. grpc-js
// builds, for every call, a Metadata object from the headers, an interceptor chain, a read queue with a
// stream decoder, a call object (an EventEmitter) and a write path through Node streams. A unary call
// needs none of it: read one length-prefixed message, run the handler, answer with headers, one DATA
// frame and trailers. Linearizable reads/s rose about 25% with it; CPU per write under `etcdctl check
// perf` fell only a few per cent. Refusals go over the wire as grpc-js sends them — the same statuses
// and messages (size limit, deadline, missing or second message, undecodable request). An OK answer's
// headers and trailers are etcd's (grpc-go's): status, content type and grpc-status only, without the
// three fields grpc-js adds. Anything unusual (compressed
// requests, an unparsable grpc-timeout, another content type, any other method) is left to grpc-js.
//
// grpc-js does not expose its HTTP/2 server, so installFastUnary() finds it in the Server's private map
// and puts itself in front of grpc-js's 'stream' listener. It checks that shape first and, if a grpc-js
// upgrade changes it, leaves every call to grpc-js (a test fails so the change is noticed).
import { status as Status } from '@grpc/grpc-js';
import type { Server } from '@grpc/grpc-js';
import { constants as h2 } from 'node:http2';
import type { IncomingHttpHeaders, Http2Server, ServerHttp2Stream } from 'node:http2';
import type { Logger } from 'pino';
import type { CallTracker, WireStatus } from '../v3rpc/edge.js';
import { toStatus } from '../v3rpc/edge.js';
import { frameMessages } from './coalesce.js';
import { OkBlockEncoder } from '../http2/hpack.js';

/** A unary method the fast path can serve: its codecs and the edge's handler core (v3rpc/edge.ts unary()). */
export interface FastUnaryMethod {
  readonly path: string;
  readonly deserialize: (buf: Buffer) => unknown;
  readonly serialize: (res: unknown) => Buffer;
  /** Starts the call's counters. */
  track(): CallTracker;
  /** Admission, size check and the call itself; `needsLeader` is the client's hasleader metadata. */
  run(req: unknown, needsLeader: boolean): Promise<unknown>;
}

/** grpc-js's status and content type, with which a refusal is answered (a trailers-only response). */
export const STATUS_AND_TYPE = {
  [h2.HTTP2_HEADER_STATUS]: h2.HTTP_STATUS_OK,
  [h2.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc+proto',
};
/**
 * An OK answer's headers and trailers as etcd's server (grpc-go) sends them: no encoding headers and no
 * grpc-message. grpc-js adds three more fields, which every client then decodes and looks at per call.
 */
export const RESPONSE_HEADERS = { [h2.HTTP2_HEADER_STATUS]: h2.HTTP_STATUS_OK, [OkBlockEncoder.CONTENT_TYPE[0]]: OkBlockEncoder.CONTENT_TYPE[1] };
export const OK_TRAILERS = { [OkBlockEncoder.GRPC_STATUS_OK[0]]: OkBlockEncoder.GRPC_STATUS_OK[1] };
const RESPOND_OPTIONS = { waitForTrailers: true };
const TRAILERS_ONLY = { endStream: true };

/** A status as grpc-js's server sends it, in trailers or a trailers-only response. */
export function statusTrailers(s: WireStatus): Record<string, string> {
  return { 'grpc-status': String(s.code), 'grpc-message': encodeURI(s.details) };
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

/** Where a fast call's one answer goes: a Node HTTP/2 stream (below) or the client port's own server (http2/front.ts). */
export interface UnaryAnswer {
  /** Response headers, one framed message, OK trailers. */
  ok(framed: Buffer): void;
  /** A trailers-only response with this status; whatever the client still sends is read and dropped. */
  status(s: WireStatus): void;
  /** True when the stream can no longer be answered (reset, closed, answered). */
  gone(): boolean;
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
    private readonly log: Logger,
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
    this.method.run(req, first(this.headers.hasleader) === 'true').then(
      (res) => {
        tracker.sent();
        tracker.done(Status.OK);
        this.succeed(res);
      },
      (e: unknown) => {
        const s = toStatus(e, this.log);
        tracker.done(s.code);
        this.fail(s);
      },
    );
  }

  /** Like grpc-js: a reply to a call the client gave up on is dropped (it was counted all the same). */
  private succeed(res: unknown): void {
    if (!this.claim()) return;
    let msg: Buffer;
    try {
      msg = this.method.serialize(res);
    } catch {
      this.answer.status({ code: Status.INTERNAL, details: 'Error serializing response' });
      return;
    }
    this.answer.ok(frameMessages([msg]));
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

/** A fast call on a Node HTTP/2 stream that grpc-js's server accepted. */
function onNodeStream(method: FastUnaryMethod, stream: ServerHttp2Stream, headers: IncomingHttpHeaders, maxReceive: number, log: Logger): void {
  const answer: UnaryAnswer = {
    ok: (framed) => {
      stream.respond(RESPONSE_HEADERS, RESPOND_OPTIONS);
      stream.once('wantTrailers', () => stream.sendTrailers(OK_TRAILERS));
      stream.end(framed);
    },
    status: (s) => {
      stream.respond({ ...statusTrailers(s), ...STATUS_AND_TYPE }, TRAILERS_ONLY);
      stream.resume();
    },
    gone: () => stream.destroyed || stream.closed || stream.headersSent,
  };
  const call = new FastCall(method, answer, headers, maxReceive, log);
  stream.once('error', () => undefined); // the 'close' that follows is what matters
  stream.once('close', () => call.stop());
  stream.on('data', (chunk: Buffer) => call.onData(chunk));
  stream.once('end', () => call.onEnd());
}

/** The grpc-js internals interceptStreams() relies on (1.10 to 1.14). */
interface GrpcServerInternals {
  readonly http2Servers?: Map<Http2Server, unknown>;
  onStreamOpened?(stream: ServerHttp2Stream): void;
}

type StreamListener = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => void;

/**
 * Puts `take` in front of grpc-js's 'stream' listener on the HTTP/2 servers of a bound grpc-js Server —
 * the last one it made, or all of them. A stream for which `take` returns no handler goes on to grpc-js;
 * one it takes is counted as open for grpc-js's idle-connection timer, then handed to the handler.
 * Returns false, leaving everything to grpc-js, if grpc-js no longer looks the way this expects.
 */
export function interceptStreams(
  server: Server,
  which: 'last' | 'all',
  take: (headers: IncomingHttpHeaders) => ((stream: ServerHttp2Stream) => void) | undefined,
): boolean {
  const internals = server as unknown as GrpcServerInternals;
  const servers = internals.http2Servers;
  if (!(servers instanceof Map) || servers.size === 0 || typeof internals.onStreamOpened !== 'function') return false;
  const targets = which === 'last' ? [[...servers.keys()].at(-1) as Http2Server] : [...servers.keys()];
  if (targets.some((h) => h.listeners('stream').length !== 1)) return false;
  const opened = internals.onStreamOpened.bind(server);
  for (const h2server of targets) {
    const grpcJs = h2server.listeners('stream')[0] as StreamListener;
    h2server.removeListener('stream', grpcJs);
    h2server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => {
      const handle = take(headers);
      if (!handle) {
        grpcJs(stream, headers, ...rest);
        return;
      }
      opened(stream);
      handle(stream);
    });
  }
  return true;
}

/** Puts the fast path in front of grpc-js on the HTTP/2 server grpc-js made last (by createConnectionInjector). */
export function installFastUnary(server: Server, methods: readonly FastUnaryMethod[], maxReceive: number, log: Logger): boolean {
  const table = new Map(methods.map((m) => [m.path, m]));
  return interceptStreams(server, 'last', (headers) => {
    const method = table.get(headers[h2.HTTP2_HEADER_PATH] as string);
    if (!method || !servable(headers)) return undefined;
    return (stream) => onNodeStream(method, stream, headers, maxReceive, log);
  });
}
