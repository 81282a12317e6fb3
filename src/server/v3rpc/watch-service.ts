// etcdserverpb.Watch: one client stream is one WatchStream (src/watch/watch-stream.ts). Requests go to it
// as they arrive; its responses go out with a full header, and when the call's write buffer is full the
// stream is paused until the client takes more, so a slow client holds back only its own watchers. The
// call runs on the client port's own HTTP/2 server (grpc/front.ts) or on grpc-js, through bidi()'s core.
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Gauge } from 'prom-client';
import type { WatchFilter, WatchRequest, WatchResponse } from '../../watch/types.js';
import type { WatchResponseSender, WatchStream } from '../../watch/watch-stream.js';
import type { KvEvent } from '../../kv/types.js';
import type { EdgeContext, Who } from './edge.js';
import type { AuthApi } from '../auth/auth-api.js';
import { EtcdError } from '../../kv/errors.js';
import { ETCD_PACKAGE, bidi } from './edge.js';
import type { Long } from './etcd-wire.js';
import { num } from './etcd-wire.js';
import { WatchResponseEncoder } from './watch-encode.js';

const SERVICE = `${ETCD_PACKAGE}.Watch`;

/** From this many events on, one watcher's response is encoded in slices (WatchResponseEncoder.encodeEventsSliced). */
const SLICED_EVENTS = 2048;

interface WireWatchCreateRequest {
  readonly key: Buffer;
  readonly rangeEnd: Buffer;
  readonly startRevision: Long;
  readonly progressNotify: boolean;
  readonly filters: readonly (string | number)[];
  readonly prevKv: boolean;
  readonly watchId: Long;
  readonly fragment: boolean;
}

interface WireWatchRequest {
  readonly createRequest?: WireWatchCreateRequest;
  readonly cancelRequest?: { readonly watchId: Long };
  readonly progressRequest?: object;
}

/** etcd ignores filter values it does not know. */
function filters(fs: readonly (string | number)[]): WatchFilter[] {
  return fs.filter((f): f is WatchFilter => f === 'NOPUT' || f === 'NODELETE');
}

export function parseWatchRequest(req: WireWatchRequest): WatchRequest | undefined {
  const c = req.createRequest;
  if (c) {
    return {
      createRequest: {
        key: c.key,
        rangeEnd: c.rangeEnd,
        startRevision: num(c.startRevision),
        progressNotify: c.progressNotify,
        filters: filters(c.filters),
        prevKv: c.prevKv,
        watchId: num(c.watchId),
        fragment: c.fragment,
      },
    };
  }
  if (req.cancelRequest) return { cancelRequest: { watchId: num(req.cancelRequest.watchId) } };
  if (req.progressRequest) return { progressRequest: {} };
  // A request with nothing set: etcd ignores it rather than failing the whole stream.
  return undefined;
}

/** Go's names of the gRPC codes a refused watch reports. */
const CODE_NAMES: Readonly<Record<number, string>> = { 3: 'InvalidArgument', 7: 'PermissionDenied', 16: 'Unauthenticated' };

/**
 * Why a watch may not be created, as etcd 3.4 refuses it: a created-and-canceled response whose reason is
 * the gRPC error as text ("rpc error: code = PermissionDenied desc = etcdserver: permission denied"); the
 * stream stays open. Undefined: the caller may read the range.
 */
async function watchRefusal(auth: AuthApi, who: Who, c: { readonly key?: Uint8Array; readonly rangeEnd?: Uint8Array }): Promise<string | undefined> {
  try {
    // An empty key is the smallest key, "\0", as etcd reads it.
    auth.checkRead(await who(), c.key && c.key.length > 0 ? c.key : Buffer.from([0]), c.rangeEnd ?? Buffer.alloc(0));
    return undefined;
  } catch (e) {
    const err = e instanceof EtcdError ? e : undefined;
    // etcd's gRPC errors as they read; anything unexpected, as permission denied.
    if (err && (err.code === 'AUTH_OLD_REVISION' || err.code === 'USER_EMPTY' || err.code === 'INVALID_AUTH_TOKEN')) return `rpc error: code = ${CODE_NAMES[err.grpcCode] ?? 'Unknown'} desc = ${err.message}`;
    return 'rpc error: code = PermissionDenied desc = etcdserver: permission denied';
  }
}

export function watchService(ctx: EdgeContext, openStreams: Gauge): UntypedServiceImplementation {
  const { store } = ctx;
  // Shared by every stream of this member, so each event is encoded once however many watchers get it.
  const encoder = new WatchResponseEncoder();
  return {
    Watch: bidi<WireWatchRequest, object>(ctx, SERVICE, 'Watch', (out, session) => {
      // Set once the stream exists; the stream only sends from its own pump, after it is constructed.
      let resume: () => void = () => undefined;
      // The WatchStream stops at `false` and waits for resume().
      const sent = (ok: boolean): boolean => {
        session.tracker.sent();
        if (!ok) out.onRoom(() => resume());
        return ok;
      };
      const send: WatchResponseSender = Object.assign((r: WatchResponse): boolean => session.ended || sent(out.write(encoder.encode(store.header(r.header.revision), r))), {
        // The usual response is written straight into the stream's outgoing bytes (a negative id, which only
        // a client's own create can choose, takes the general path).
        events: (watchId: number, revision: number, events: readonly KvEvent[]): boolean => {
          if (session.ended) return true;
          if (events.length < SLICED_EVENTS) {
            return sent(watchId >= 0 ? out.writeEncoded(encoder.prepareEvents(store.header(revision), watchId, events)) : out.write(encoder.encodeEvents(store.header(revision), watchId, events)));
          }
          // A revision of many events is encoded over several turns; the stream waits for it (false:
          // stop until resume()), so nothing it sends later can overtake it.
          void encoder.encodeEventsSliced(store.header(revision), watchId, events).then((buf) => {
            if (session.ended) return;
            if (sent(out.write(buf))) resume();
          });
          return false;
        },
      });
      const stream: WatchStream = store.openWatchStream(send);
      /** Requests waiting behind an auth check, once auth was on for this stream. */
      let checks: Promise<void> | undefined;
      resume = () => stream.resume();
      openStreams.inc();
      return {
        onRequest: (req) => {
          const parsed = parseWatchRequest(req);
          if (!parsed) return;
          // With auth on, the stream's requests are taken in order behind the caller's lookup.
          if (!store.auth?.enabled && checks === undefined) return stream.handle(parsed);
          const auth = store.auth;
          checks = (checks ?? Promise.resolve()).then(async () => {
            const create = 'createRequest' in parsed ? parsed.createRequest : undefined;
            const refused = create && auth?.enabled ? await watchRefusal(auth, session.who, create) : undefined;
            if (session.ended) return;
            if (refused === undefined) stream.handle(parsed);
            else send({ header: { revision: store.header().revision }, watchId: create?.watchId ?? 0, created: true, canceled: true, compactRevision: 0, cancelReason: refused, fragment: false, events: [] });
          }).catch((e: unknown) => session.finish(e));
          return undefined;
        },
        // The client closed its side. etcd's recvLoop stops at EOF but the send side goes on until the
        // client cancels the call, so watches keep delivering: do the same.
        onEnd: () => undefined,
        onClose: () => {
          stream.close();
          openStreams.dec();
        },
      };
    }),
  };
}
