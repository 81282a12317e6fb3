// Every watch of a client on one gRPC Watch stream, as clientv3 multiplexes them: creates sent one at a time
// (the server numbers watches in the order it creates them, and answers each create before the next),
// responses routed by watch id, fragments put back together, progress answers given to every watch on the
// stream. When the stream breaks — the member died, lost its leader (the stream carries `hasleader`, so
// such a member ends it), or stopped answering pings — the client moves to the next endpoint and creates
// every watch again from the revision after the last one it took in: no gap, no repeat.
import { Metadata } from '@grpc/grpc-js';
import type { ClientDuplexStream } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Endpoint, EndpointPool } from './endpoints.js';
import { EtcdClientError, fromGrpc } from './errors.js';
import type { WireEvent, WireWatchResponse } from './proto.js';
import { watchCanceled } from './watch.js';
import type { ClientWatch, WatchCarrier } from './watch.js';

type WatchCall = ClientDuplexStream<object, WireWatchResponse>;

interface Stream {
  readonly call: WatchCall;
  readonly endpoint: Endpoint;
}

interface Fragments {
  readonly events: WireEvent[];
  bytes: number;
}

export interface WatchStreamOptions {
  /** Largest response put back together from fragments. */
  readonly maxFragmentBytes: number;
  /** The store sends answers to progress requests in order with events (etcd >= 3.4.31, 3.5.13). */
  readonly trustProgressRequests: boolean;
}

export class WatchStream implements WatchCarrier {
  private stream: Stream | undefined;
  /** Watches not canceled or failed, in the order they were made (re-created in that order). */
  private readonly live = new Set<ClientWatch>();
  private readonly queue: ClientWatch[] = [];
  private creating: ClientWatch | undefined;
  private readonly byId = new Map<string, ClientWatch>();
  private readonly fragments = new Map<string, Fragments>();
  private failures = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly pool: EndpointPool,
    private readonly log: Logger,
    private readonly opts: WatchStreamOptions,
  ) {}

  /** How many watches the client holds (whether or not the server has them right now). */
  get size(): number {
    return this.live.size;
  }

  add(w: ClientWatch): void {
    if (this.closed) {
      w.end();
      return;
    }
    this.live.add(w);
    this.enqueue(w);
  }

  /** Asks the member serving the stream for a progress notification (WatchProgressRequest). */
  requestProgress(): boolean {
    if (!this.stream) return false;
    this.stream.call.write({ progressRequest: {} });
    return true;
  }

  // ---- WatchCarrier ----

  cancel(w: ClientWatch): void {
    this.live.delete(w);
    this.takeOff(w, 'cancel');
    w.muxState = w.muxState === 'creating' ? 'creating' : 'done';
    if (this.live.size === 0 && !this.creating) this.endStream();
  }

  suspend(w: ClientWatch): void {
    this.takeOff(w, 'suspend');
    if (w.muxState !== 'creating') w.muxState = 'idle';
  }

  resume(w: ClientWatch): void {
    if (w.muxState === 'creating' && w.afterCreate === 'suspend') w.afterCreate = undefined;
    else if (w.muxState === 'idle') this.enqueue(w);
  }

  close(): void {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.endStream();
    for (const w of this.live) w.end();
    this.live.clear();
    this.queue.length = 0;
  }

  // ---- the stream ----

  /** Takes the watch off the server (or out of the queue); a create in flight is undone when answered. */
  private takeOff(w: ClientWatch, why: 'cancel' | 'suspend'): void {
    switch (w.muxState) {
      case 'queued': {
        const i = this.queue.indexOf(w);
        if (i >= 0) this.queue.splice(i, 1);
        break;
      }
      case 'creating':
        w.afterCreate = why === 'cancel' || w.afterCreate === 'cancel' ? 'cancel' : 'suspend';
        break;
      case 'active':
        this.cancelOnServer(w);
        break;
      default:
        break;
    }
  }

  private cancelOnServer(w: ClientWatch): void {
    const id = w.serverId;
    w.serverId = undefined;
    if (id === undefined) return;
    this.byId.delete(id);
    this.fragments.delete(id);
    this.stream?.call.write({ cancelRequest: { watchId: id } });
  }

  private enqueue(w: ClientWatch): void {
    w.muxState = 'queued';
    this.queue.push(w);
    this.pump();
  }

  /** Sends the next create once the previous one is answered, opening a stream when there is none. */
  private pump(): void {
    if (this.closed || this.creating || this.queue.length === 0) return;
    if (!this.stream) {
      if (!this.reconnectTimer) this.open();
      return;
    }
    const w = this.queue.shift() as ClientWatch;
    this.creating = w;
    w.muxState = 'creating';
    const s = w.spec;
    this.stream.call.write({
      createRequest: {
        key: s.key,
        ...(s.rangeEnd && s.rangeEnd.length > 0 ? { rangeEnd: s.rangeEnd } : {}),
        startRevision: String(w.nextStartRevision()),
        progressNotify: s.progressNotify,
        prevKv: s.prevKv,
        filters: s.filters ?? [],
        fragment: true,
      },
    });
  }

  private open(): void {
    const endpoint = this.pool.current();
    const md = new Metadata();
    // As clientv3.WithRequireLeader: a member without a leader refuses the stream, or ends it.
    md.set('hasleader', 'true');
    const svc = endpoint.services.Watch as unknown as { Watch(md: Metadata): WatchCall };
    const call = svc.Watch(md);
    const stream: Stream = { call, endpoint };
    this.stream = stream;
    let ended = false;
    const end = (err: unknown): void => {
      if (ended) return;
      ended = true;
      this.onStreamEnd(stream, err);
    };
    call.on('data', (res: WireWatchResponse) => this.onResponse(stream, res));
    call.on('error', (e) => end(e));
    call.on('end', () => end(undefined));
    this.pump();
  }

  private endStream(): void {
    const s = this.stream;
    if (!s) return;
    this.stream = undefined;
    this.byId.clear();
    this.fragments.clear();
    s.call.end();
    s.call.cancel();
  }

  private onStreamEnd(stream: Stream, err: unknown): void {
    if (this.stream !== stream) return;
    this.stream = undefined;
    this.byId.clear();
    this.fragments.clear();
    const e = err === undefined ? undefined : fromGrpc(err, stream.endpoint.url);
    // Once per outage: a cluster that is down entirely would otherwise log every reconnect.
    const level = this.failures === 0 ? 'warn' : 'debug';
    this.log[level]({ endpoint: stream.endpoint.url, err: e?.message ?? 'stream ended' }, 'watch stream broke: re-creating its watches on the next endpoint');
    this.pool.advance(stream.endpoint);
    // A create in flight and every watch the server had go back in the queue, in the order they were made.
    this.creating = undefined;
    this.queue.length = 0;
    for (const w of this.live) {
      w.serverId = undefined;
      if (w.muxState === 'creating' && w.afterCreate === 'suspend') {
        w.afterCreate = undefined;
        w.muxState = 'idle';
      } else if (w.muxState !== 'idle' && w.muxState !== 'done') {
        w.afterCreate = undefined;
        w.muxState = 'queued';
        this.queue.push(w);
      }
    }
    if (this.closed || this.queue.length === 0) return;
    this.failures++;
    // The first retry goes at once to another member; a cluster that is down entirely is asked less often.
    const delay = this.failures <= 1 ? 0 : Math.min(1000, 25 * 2 ** this.failures);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.pump();
    }, delay);
  }

  private onResponse(stream: Stream, res: WireWatchResponse): void {
    if (this.stream !== stream) return;
    this.failures = 0;
    const revision = Number(res.header?.revision ?? 0);
    if (res.created) {
      this.onCreated(stream, res, revision);
      return;
    }
    if (res.watchId === '-1') {
      // A WatchProgressRequest's answer, for every watch on the stream. A store with etcd-io/etcd#15220 may
      // send it ahead of events it covers: unless trusted it must not move a watch past them.
      if (res.events.length === 0 && !res.canceled) {
        for (const w of this.byId.values()) {
          if (this.opts.trustProgressRequests) w.progress(revision);
          else w.progressClaim(revision);
        }
      }
      return;
    }
    const w = this.byId.get(res.watchId);
    if (!w) return; // canceled or set aside already: its late responses mean nothing
    if (res.canceled) {
      this.byId.delete(res.watchId);
      this.fragments.delete(res.watchId);
      this.live.delete(w);
      w.fail(canceledError(res, stream.endpoint.url));
      return;
    }
    const events = this.reassemble(res, stream);
    if (events === undefined) return;
    if (events.length > 0) w.deliver(events);
    else if (revision > 0 && Number(res.compactRevision) === 0) w.progress(revision);
  }

  private onCreated(stream: Stream, res: WireWatchResponse, revision: number): void {
    const w = this.creating;
    this.creating = undefined;
    if (w) {
      if (res.canceled) {
        this.live.delete(w);
        w.fail(canceledError(res, stream.endpoint.url));
      } else {
        const then = w.afterCreate;
        w.afterCreate = undefined;
        w.serverId = res.watchId;
        w.muxState = 'active';
        this.byId.set(res.watchId, w);
        w.created(revision);
        if (then === 'cancel') {
          this.cancelOnServer(w);
          w.muxState = 'done';
        } else if (then === 'suspend') {
          this.cancelOnServer(w);
          w.muxState = 'idle';
        }
      }
    }
    if (this.live.size === 0) this.endStream();
    else this.pump();
  }

  /** The events of a whole response, or undefined while fragments of it are still coming. */
  private reassemble(res: WireWatchResponse, stream: Stream): WireEvent[] | undefined {
    const pending = this.fragments.get(res.watchId);
    if (!res.fragment && !pending) return res.events;
    const f = pending ?? { events: [], bytes: 0 };
    for (const e of res.events) {
      f.events.push(e);
      f.bytes += (e.kv?.value.length ?? 0) + (e.prevKv?.value.length ?? 0) + 64;
    }
    if (f.bytes > this.opts.maxFragmentBytes) {
      const w = this.byId.get(res.watchId);
      this.fragments.delete(res.watchId);
      if (w) {
        this.cancelOnServer(w);
        this.live.delete(w);
        w.fail(new EtcdClientError('ETCD_MESSAGE_TOO_LARGE', `watch response over ${this.opts.maxFragmentBytes} bytes`, 8, false, stream.endpoint.url));
      }
      return undefined;
    }
    if (res.fragment) {
      this.fragments.set(res.watchId, f);
      return undefined;
    }
    this.fragments.delete(res.watchId);
    return f.events;
  }
}

function canceledError(res: WireWatchResponse, endpoint: string): EtcdClientError {
  const compactRevision = Number(res.compactRevision);
  if (compactRevision > 0) {
    // OUT_OF_RANGE (11), etcd's code for a compacted revision.
    return new EtcdClientError('ETCD_COMPACTED', 'etcdserver: mvcc: required revision has been compacted', 11, false, endpoint, compactRevision);
  }
  return watchCanceled(res.cancelReason, endpoint);
}
