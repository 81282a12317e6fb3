// The edge every etcd RPC passes: etcd's interceptor checks (leader required, learner), the request size
// limit on what etcd would propose through Raft, the one mapping of errors to gRPC statuses (EtcdError
// keeps its code and exact message; anything else is UNKNOWN and logged), and go-grpc-prometheus's
// per-call counters.
import type { IncomingHttpHeaders } from 'node:http2';
import { DirectWriter, coalesceWrites } from '../grpc/coalesce.js';
import { status as Status } from '@grpc/grpc-js';
import type { handleBidiStreamingCall, handleUnaryCall, Metadata } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { EtcdError, etcdError } from '../../kv/errors.js';
import { varintLength } from '../../kv/pb.js';
import type { StoreApi } from '../member/store-api.js';
import type { GrpcMetrics } from '../grpc/call-metrics.js';
import { CallTracker, MethodCounters } from '../grpc/call-metrics.js';
import type { BidiCall, BidiCore, BidiTransport, EncodedMessage } from '../grpc/bidi.js';
import { materialize } from '../grpc/bidi.js';
import type { WireStatus } from '../grpc/wire-status.js';
import { first } from '../grpc/fast-unary.js';
import type { LeaderGuard } from './leader-guard.js';
import { headersRequireLeader, requiresLeader } from './leader-guard.js';
import { wireSize } from './etcd-proto.js';
import type { AuthInfo } from '../auth/auth-state.js';
import { PEER_NAME_HEADER, peerNameOfHeader, peerNameOfHeaders } from '../grpc/peer-name.js';

/** etcd's default MaxRequestBytes (--max-request-bytes). */
export const DEFAULT_MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;
/** What gRPC may receive beyond MaxRequestBytes before refusing a message itself (etcd's grpcOverheadBytes). */
export const GRPC_OVERHEAD_BYTES = 512 * 1024;

/**
 * etcd measures the InternalRaftRequest that wraps a request: the request as a field (a one-byte tag and
 * its length) plus a RequestHeader holding a generated 64-bit id (a two-byte tag for field 100, a length,
 * and a tagged varint of up to 9 bytes for ids as etcd makes them).
 */
const RAFT_HEADER_BYTES = 2 + 1 + 1 + 9;

/** A gRPC status that is not one of etcd's errors (auth we do not implement, unknown health services). */
export class StatusError extends Error {
  constructor(
    readonly code: Status,
    message: string,
  ) {
    super(message);
    this.name = 'StatusError';
  }
}

export interface EdgeContext {
  readonly store: StoreApi;
  readonly log: Logger;
  readonly metrics: GrpcMetrics;
  readonly guard: LeaderGuard;
  readonly maxRequestBytes: number;
}

export function toStatus(e: unknown, log: Logger): WireStatus {
  if (e instanceof EtcdError) return { code: e.grpcCode, details: e.message };
  if (e instanceof StatusError) return { code: e.code, details: e.message };
  log.error({ err: e }, 'request failed with an unexpected error');
  return { code: Status.UNKNOWN, details: e instanceof Error ? e.message : String(e) };
}

/** An Error carrying a status, which grpc-js turns into the call's status when a stream emits it. */
export function statusError(s: WireStatus): Error & WireStatus {
  return Object.assign(new Error(s.details), s);
}

/**
 * etcd's ErrRequestTooLarge for a request that would be proposed: its Raft envelope over MaxRequestBytes.
 * etcd's v3rpc checks (empty key, too many ops, …) come first there, so an oversized request that is also
 * invalid gets `validate`'s error; only the rare oversized request pays for running it here.
 */
function tooLarge(ctx: EdgeContext, req: unknown): boolean {
  const n = wireSize(req);
  return n + 1 + varintLength(n) + RAFT_HEADER_BYTES > ctx.maxRequestBytes;
}

/** etcd's interceptor checks for any call: leader required (hasleader metadata), and learners' limits. */
export async function admit(ctx: EdgeContext, md: Metadata, learnerOk: boolean): Promise<void> {
  await admitCall(ctx, requiresLeader(md), learnerOk);
}

export async function admitCall(ctx: EdgeContext, needsLeader: boolean, learnerOk: boolean): Promise<void> {
  if (!learnerOk && ctx.guard.isLearner) throw etcdError('NOT_SUPPORTED_FOR_LEARNER');
  if (needsLeader) await ctx.guard.requireLeader();
}

/**
 * The caller of a call: its `token` metadata's user (etcd's AuthInfoFromCtx), or without a token the CN of
 * its verified client certificate under --client-cert-auth (grpc/peer-name.ts), resolved when a handler
 * asks, as etcd resolves it only where it checks; undefined without either, etcd's "invalid auth token"
 * for a token this member does not know.
 */
export type Who = () => Promise<AuthInfo | undefined>;

const NO_CALLER: Promise<undefined> = Promise.resolve(undefined);

/** The token a call carries: gRPC metadata `token` (etcd's clients), or `authorization` (its JSON gateway). */
export function tokenOf(get: (key: string) => string | undefined): string | undefined {
  return get('token') ?? get('authorization');
}

/** What a call says of its caller: its token, and its client certificate's name. */
export interface Credentials {
  readonly token: string | undefined;
  readonly peerName: string | undefined;
}

export function metadataCredentials(md: Metadata): Credentials {
  const get = (k: string): string | undefined => {
    const v = md.get(k)[0];
    return typeof v === 'string' ? v : undefined;
  };
  return { token: tokenOf(get), peerName: peerNameOfHeader(get(PEER_NAME_HEADER)) };
}

export function headersCredentials(headers: IncomingHttpHeaders): Credentials {
  return { token: tokenOf((k) => first(headers[k])), peerName: peerNameOfHeaders(headers) };
}

export function whoFor(ctx: EdgeContext, c: Credentials): Who {
  return () => ((c.token === undefined && c.peerName === undefined) || !ctx.store.auth ? NO_CALLER : ctx.store.auth.who(c.token, c.peerName));
}

export interface UnaryOptions<Req> {
  /** True for requests etcd proposes through Raft: they must fit MaxRequestBytes. */
  readonly proposal?: (req: Req) => boolean;
  /**
   * The store checks the request (member/kv-requests.ts checkWrite, the one place): an oversized one is
   * handed to the handler with tooLarge set rather than refused here, since etcd answers an oversized
   * request that is also invalid with the check's error.
   */
  readonly storeChecks?: boolean;
  /** True for requests a learner serves (etcd: serializable Range and Status). */
  readonly learnerOk?: (req: Req) => boolean;
}

/** What a unary handler does once the request is decoded, on the client port's own HTTP/2 server. */
export interface UnaryCore {
  /** Starts one call's counters. */
  track(): CallTracker;
  /** Admission, the size check and the call itself; `metadata`: the request's headers. */
  run(req: unknown, metadata: IncomingHttpHeaders): Promise<unknown>;
  /** The status a failed run() answers with (etcd's errors keep their code and message). */
  toStatus(e: unknown): WireStatus;
}

const CORES = new WeakMap<object, UnaryCore>();

/** The core of a handler made by unary(), for the fast path (grpc/fast-unary.ts). */
export function unaryCore(handler: unknown): UnaryCore | undefined {
  return typeof handler === 'function' ? CORES.get(handler) : undefined;
}

/**
 * A unary handler: admission, the size check, the call itself, and its status, all counted. `fn` sees
 * only the request, so the fast path (grpc/fast-unary.ts) can run the same core through unaryCore().
 */
export function unary<Req, Res>(
  ctx: EdgeContext,
  service: string,
  method: string,
  fn: (req: Req, tooLarge: boolean, who: Who) => Promise<Res>,
  opts: UnaryOptions<Req> = {},
): handleUnaryCall<Req, Res> {
  const counters = new MethodCounters(ctx.metrics, 'unary', service, method);
  const run = async (req: Req, needsLeader: boolean, caller: Credentials): Promise<Res> => {
    await admitCall(ctx, needsLeader, opts.learnerOk?.(req) ?? false);
    const oversized = opts.proposal?.(req) === true && tooLarge(ctx, req);
    if (oversized && opts.storeChecks !== true) throw etcdError('REQUEST_TOO_LARGE');
    return fn(req, oversized, whoFor(ctx, caller));
  };
  const handler: handleUnaryCall<Req, Res> = (call, callback) => {
    const t = new CallTracker(counters);
    t.received();
    run(call.request, requiresLeader(call.metadata), metadataCredentials(call.metadata)).then(
      (res) => {
        t.sent();
        t.done(Status.OK);
        callback(null, res);
      },
      (e: unknown) => {
        const s = toStatus(e, ctx.log);
        t.done(s.code);
        callback(s);
      },
    );
  };
  CORES.set(handler, {
    track: () => new CallTracker(counters),
    run: (req, metadata) => run(req as Req, headersRequireLeader(metadata), headersCredentials(metadata)),
    toStatus: (e) => toStatus(e, ctx.log),
  });
  return handler;
}

/** The package of etcd's services, for the grpc_service label. */
export const ETCD_PACKAGE = 'etcdserverpb';

/** What a bidirectional stream's handler is given: its counters, and the way to end the call. */
export interface StreamSession {
  readonly tracker: CallTracker;
  /** Ends the call: OK without an error, else the error's status. Later calls do nothing. */
  finish(err?: unknown): void;
  readonly ended: boolean;
  /** The stream's caller, from the metadata it opened with. */
  readonly who: Who;
}

/** Where a bidi handler's responses go, whichever HTTP/2 server carries the call. */
export interface BidiOut<Res> {
  /**
   * Sends one response (a Buffer is one encoded already). False: the client is behind; the handler stops
   * sending until the callback given to onRoom() runs.
   */
  write(res: Res | Buffer): boolean;
  /** write() for a message the transport may lay down in place; the same answer. */
  writeEncoded(m: EncodedMessage): boolean;
  /** Runs `f` once, when the client can take more after a write() that returned false. */
  onRoom(f: () => void): void;
}

export interface BidiHandlers<Req> {
  onRequest(req: Req): void;
  /** The client half-closed its side. */
  onEnd(): void;
  /** The call is over, whichever way it ended: release what the stream holds. */
  onClose(): void;
}

const BIDI_CORES = new WeakMap<object, BidiCore>();

/** The core of a handler made by bidi(), for the HTTP/2 server's own streams. */
export function bidiCore(handler: unknown): BidiCore | undefined {
  return typeof handler === 'function' ? BIDI_CORES.get(handler) : undefined;
}

/**
 * A bidirectional stream as etcd runs one: refused up front by the interceptor checks, tracked for the
 * leader monitor when it asked for a leader, and closed exactly once however it ends (client cancel,
 * client half-close, server error, leader loss). The same core serves it on grpc-js and on the client
 * port's own HTTP/2 server: requests that arrive while admission is pending wait for it, in order.
 */
export function bidi<Req, Res>(
  ctx: EdgeContext,
  service: string,
  method: string,
  start: (out: BidiOut<Res>, session: StreamSession) => BidiHandlers<Req>,
): handleBidiStreamingCall<Req, Res> {
  const counters = new MethodCounters(ctx.metrics, 'bidi_stream', service, method);
  const open = (t: BidiTransport, needsLeader: boolean, caller: Credentials): BidiCall => {
    const tracker = new CallTracker(counters);
    let handlers: BidiHandlers<Req> | undefined;
    let untrack: (() => void) | undefined;
    let ended = false;
    // Before admission: what the client sent, in order (undefined entry: its half-close).
    let waiting: (Req | undefined)[] | undefined = [];
    let roomWaiters: (() => void)[] = [];
    /** Ends the call once, whichever way: false if it was over already. */
    const close = (code: Status): boolean => {
      if (ended) return false;
      ended = true;
      untrack?.();
      handlers?.onClose();
      tracker.done(code);
      return true;
    };
    const session: StreamSession = {
      tracker,
      who: whoFor(ctx, caller),
      get ended() {
        return ended;
      },
      finish(err?: unknown) {
        if (ended) return;
        const s: WireStatus = err === undefined ? { code: Status.OK, details: 'OK' } : toStatus(err, ctx.log);
        close(s.code);
        t.end(s);
      },
    };
    const out: BidiOut<Res> = {
      write: (res) => t.write(res),
      writeEncoded: (m) => (t.writeEncoded ? t.writeEncoded(m) : t.write(materialize(m))),
      onRoom: (f) => void roomWaiters.push(f),
    };
    const deliver = (req: Req | undefined): void => {
      if (ended || !handlers) return;
      if (req === undefined) return handlers.onEnd();
      tracker.received();
      handlers.onRequest(req);
    };
    admitCall(ctx, needsLeader, false).then(
      () => {
        if (ended) return;
        handlers = start(out, session);
        if (needsLeader) untrack = ctx.guard.track((e) => session.finish(e));
        const early = waiting ?? [];
        waiting = undefined;
        for (const req of early) deliver(req);
      },
      (e: unknown) => session.finish(e),
    );
    return {
      request: (req) => {
        if (waiting) waiting.push(req as Req);
        else deliver(req as Req);
      },
      halfClose: () => {
        if (waiting) waiting.push(undefined);
        else deliver(undefined);
      },
      cancel: () => void close(Status.CANCELLED),
      room: () => {
        const fs = roomWaiters;
        roomWaiters = [];
        for (const f of fs) f();
      },
    };
  };
  const handler: handleBidiStreamingCall<Req, Res> = (call) => {
    // Responses that queue behind an in-flight write leave in one HTTP/2 write (grpc/coalesce.ts).
    coalesceWrites(call);
    // `opened` is set before anything is written: the handler starts after admission, a promise later.
    const room = (): void => opened.room();
    // Encoded responses go out in one HTTP/2 write per turn of the event loop (grpc/coalesce.ts).
    const direct = DirectWriter.for(call, room);
    const t: BidiTransport = {
      write: (res) => {
        if (Buffer.isBuffer(res)) return direct.write(res);
        const ok = call.write(res as Res);
        if (!ok) call.once('drain', room);
        return ok;
      },
      end: (s) => {
        if (s.code === Status.OK) call.end();
        else call.emit('error', statusError(s));
      },
    };
    const opened = open(t, requiresLeader(call.metadata), metadataCredentials(call.metadata));
    call.on('cancelled', () => opened.cancel());
    call.on('data', (req: Req) => opened.request(req));
    call.on('end', () => opened.halfClose());
  };
  BIDI_CORES.set(handler, { open: (t, metadata) => open(t, headersRequireLeader(metadata), headersCredentials(metadata)) });
  return handler;
}
