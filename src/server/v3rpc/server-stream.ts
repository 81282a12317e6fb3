// A server-streaming call (Maintenance.Snapshot) as one core that two transports carry: grpc-js's call
// object, and the JSON gateway's chunked response. The core does etcd's interceptor checks, counts the
// call, and hands the handler a sink whose send() waits while the client is behind, so a slow reader
// holds one message in memory, not the whole stream.
import type { IncomingHttpHeaders } from 'node:http2';
import { status as Status } from '@grpc/grpc-js';
import type { handleServerStreamingCall } from '@grpc/grpc-js';
import type { WireStatus } from '../grpc/wire-status.js';
import { CallTracker, MethodCounters } from '../grpc/call-metrics.js';
import { headersRequireLeader, requiresLeader } from './leader-guard.js';
import type { EdgeContext, Who } from './edge.js';
import { admitCall, headersCredentials, metadataCredentials, statusError, toStatus, whoFor } from './edge.js';
import type { Credentials } from './edge.js';

/** Where a server-streaming handler sends its responses. */
export interface StreamSink<Res> {
  /** Sends one response; resolves when the client can take the next one. */
  send(res: Res): Promise<void>;
  /** The client went away: the handler stops at its next send. */
  readonly cancelled: boolean;
}

/** The transport side of one server-streaming call. */
export interface ServerStreamTransport {
  /** Sends one response; false when the client is behind (onRoom's callback follows). */
  write(res: unknown): boolean;
  onRoom(f: () => void): void;
  /** Ends the call with this status (OK included). */
  end(s: WireStatus): void;
}

export interface ServerStreamCore {
  /** Starts one call on a decoded request; `metadata`: the request's headers. Returns its cancel. */
  open(req: unknown, t: ServerStreamTransport, metadata: IncomingHttpHeaders): { cancel(): void };
}

const CORES = new WeakMap<object, ServerStreamCore>();

/** The core of a handler made by serverStream(), for the JSON gateway. */
export function serverStreamCore(handler: unknown): ServerStreamCore | undefined {
  return typeof handler === 'function' ? CORES.get(handler) : undefined;
}

export function serverStream<Req, Res>(
  ctx: EdgeContext,
  service: string,
  method: string,
  fn: (req: Req, sink: StreamSink<Res>, who: Who) => Promise<void>,
): handleServerStreamingCall<Req, Res> {
  const counters = new MethodCounters(ctx.metrics, 'server_stream', service, method);
  const open = (req: Req, t: ServerStreamTransport, needsLeader: boolean, credentials: Credentials): { cancel(): void } => {
    const tracker = new CallTracker(counters);
    tracker.received();
    let cancelled = false;
    // A send waiting for room; a cancel lets it go, so the handler sees `cancelled` and releases what it holds.
    let waiting: (() => void) | undefined;
    const sink: StreamSink<Res> = {
      send: (res) => {
        if (cancelled) return Promise.resolve();
        tracker.sent();
        if (t.write(res)) return Promise.resolve();
        return new Promise<void>((resolve) => {
          waiting = resolve;
          t.onRoom(() => {
            waiting = undefined;
            resolve();
          });
        });
      },
      get cancelled() {
        return cancelled;
      },
    };
    const run = async (): Promise<void> => {
      await admitCall(ctx, needsLeader, false);
      await fn(req, sink, whoFor(ctx, credentials));
    };
    run().then(
      () => {
        if (cancelled) return;
        tracker.done(Status.OK);
        t.end({ code: Status.OK, details: 'OK' });
      },
      (e: unknown) => {
        if (cancelled) return;
        const s = toStatus(e, ctx.log);
        tracker.done(s.code);
        t.end(s);
      },
    );
    return {
      cancel: () => {
        if (cancelled) return;
        cancelled = true;
        tracker.done(Status.CANCELLED);
        waiting?.();
      },
    };
  };
  const handler: handleServerStreamingCall<Req, Res> = (call) => {
    const opened = open(
      call.request,
      {
        write: (res) => call.write(res as Res),
        onRoom: (f) => void call.once('drain', f),
        end: (s) => {
          if (s.code === Status.OK) call.end();
          else call.emit('error', statusError(s));
        },
      },
      requiresLeader(call.metadata),
      metadataCredentials(call.metadata),
    );
    call.on('cancelled', () => opened.cancel());
  };
  CORES.set(handler, {
    open: (req, t, metadata) => open(req as Req, t, headersRequireLeader(metadata), headersCredentials(metadata)),
  });
  return handler;
}
