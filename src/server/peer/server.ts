// The inbound side of the peer transport: a gRPC server for the Peer service on the member's listen
// URLs. Every call is admitted by its identity metadata first (our cluster, meant for us, not from a
// removed member); messages then go to the member's InboundHandlers, snapshots as a stream of chunks.
import { Metadata, Server, status } from '@grpc/grpc-js';
import type {
  sendUnaryData,
  ServerReadableStream,
  ServerUnaryCall,
  ServiceError,
  UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { Logger } from 'pino';
import { EtcdError } from '../../kv/errors.js';
import type { NodeId } from '../../raft/types.js';
import { NONE, isNodeId } from '../../raft/types.js';
import type { InboundHandlers } from '../member/transport-api.js';
import { interceptStreams } from '../grpc/grpc-js-internals.js';
import { grpcSendCall, H2SendCall, headerOf, servableSend } from './send-call.js';
import type { SendCall } from './send-call.js';
import { memberToWire, messageFromWire, PeerCodecError, plainBytes, wireCount, wireNodeId } from './codec.js';
import { serverOptions } from './channel.js';
import type { PeerTimings } from './channel.js';
import { parsePeerUrl, serverCredentials } from './credentials.js';
import type { PeerTls } from './credentials.js';
import { PeerError, refusalStatus } from './errors.js';
import type { PeerRefusalCode } from './errors.js';
import { MAX_GRPC_MESSAGE_BYTES, MD_CLUSTER_ID, MD_ETCD_ERROR, MD_FROM, MD_TO, peerService } from './proto.js';
import type {
  Empty,
  WireLeaseKeepAliveRequest,
  WireLeaseKeepAliveResponse,
  WireLeaseTimeToLiveRequest,
  WireLeaseTimeToLiveResponse,
  WireMemberPromoteRequest,
  WireMemberPromoteResponse,
  SendBatch,
  WireSendSummary,
  WireSnapshotChunk,
} from './proto.js';

export interface PeerServerOptions {
  readonly memberId: NodeId;
  readonly clusterId: string;
  readonly listenUrls: readonly string[];
  readonly tls: PeerTls | undefined;
  readonly handlers: InboundHandlers;
  readonly timings: PeerTimings;
  readonly log: Logger;
  /** Whether `id` has been removed from the cluster (its calls are refused). */
  isRemoved(id: NodeId): boolean;
  /** Logs once per key: a peer knocking every two seconds, or a buggy one, fills no log. */
  warnOnce(key: string, obj: Record<string, unknown>, msg: string): void;
  /** A peer's message stream was admitted: the peer is up. */
  onInboundStream?(from: NodeId): void;
  /** Serve peers' message streams straight off HTTP/2, or through grpc-js (tests compare the two). */
  readonly fastSend: boolean;
}

export interface InboundStats {
  batches: number;
  messages: number;
  /** Payload received: entry data and snapshot kv chunks. */
  bytes: number;
  /** Messages that could not be decoded or that the member's handler threw on. */
  failures: number;
  snapshots: number;
}

type Admission = { readonly from: NodeId } | { readonly refusal: PeerRefusalCode; readonly detail: string };

export class PeerServer {
  private readonly server: Server;
  /** The one inbound Send stream per peer (ended with the status given): a newer one supersedes the old. */
  private readonly streams = new Map<NodeId, (end: Partial<ServiceError>) => void>();
  private readonly inbound = new Map<NodeId, InboundStats>();
  private boundAddresses: string[] = [];

  constructor(private readonly opts: PeerServerOptions) {
    this.server = new Server(serverOptions(opts.timings));
    const impl: UntypedServiceImplementation = {
      Send: this.onSend.bind(this),
      Snapshot: this.onSnapshot.bind(this),
      LeaseKeepAlive: this.onLeaseKeepAlive.bind(this),
      LeaseTimeToLive: this.onLeaseTimeToLive.bind(this),
      MemberPromote: this.onMemberPromote.bind(this),
      Probe: this.onProbe.bind(this),
      Members: this.onMembers.bind(this),
    };
    this.server.addService(peerService().definition, impl);
  }

  /** Binds every listen URL (port 0 picks a free port); resolves with the URLs actually bound. */
  async listen(): Promise<string[]> {
    const out: string[] = [];
    for (const raw of this.opts.listenUrls) {
      const url = parsePeerUrl(raw);
      const creds = serverCredentials(url, this.opts.tls);
      const port = await new Promise<number>((resolve, reject) => {
        this.server.bindAsync(url.target, creds, (err, p) => (err ? reject(new PeerError('PEER_CONFIG', `peer transport: cannot listen on ${raw}: ${err.message}`)) : resolve(p)));
      });
      const host = url.hostname.includes(':') && !url.hostname.startsWith('[') ? `[${url.hostname}]` : url.hostname;
      out.push(`${url.secure ? 'https' : 'http'}://${host}:${port}`);
    }
    this.boundAddresses = out;
    if (this.opts.fastSend) this.installFastSend();
    return out;
  }

  /** Peers' message streams, read straight off HTTP/2 (peer/send-call.ts); anything else stays with grpc-js. */
  private installFastSend(): void {
    const take = (headers: IncomingHttpHeaders): ((stream: ServerHttp2Stream) => void) | undefined =>
      servableSend(headers) ? (stream) => this.openSend(new H2SendCall(stream, headers, MAX_GRPC_MESSAGE_BYTES)) : undefined;
    interceptStreams(this.server, 'all', take);
  }

  get addresses(): readonly string[] {
    return this.boundAddresses;
  }

  stats(): ReadonlyMap<NodeId, Readonly<InboundStats>> {
    return this.inbound;
  }

  /** A member was removed: end its stream now; its later calls are refused by admission. */
  refuseFrom(id: NodeId): void {
    this.streams.get(id)?.(refusalStatus('PEER_MEMBER_REMOVED', `member ${id} was removed`) as Partial<ServiceError>);
  }

  async close(): Promise<void> {
    for (const end of [...this.streams.values()]) end({ code: status.UNAVAILABLE, details: 'peer transport closing' });
    // Peers reconnect on their own; we only give in-flight unary answers a moment to leave.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, 200);
      timer.unref();
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private statsFor(id: NodeId): InboundStats {
    let s = this.inbound.get(id);
    if (!s) {
      s = { batches: 0, messages: 0, bytes: 0, failures: 0, snapshots: 0 };
      this.inbound.set(id, s);
    }
    return s;
  }

  private admit(one: (key: string) => string | undefined): Admission {
    const fromRaw = one(MD_FROM);
    const to = one(MD_TO);
    const cluster = one(MD_CLUSTER_ID);
    const from = fromRaw !== undefined && /^[1-9]\d{0,19}$/.test(fromRaw) ? BigInt(fromRaw) : NONE;
    if (!isNodeId(from) || to === undefined || cluster === undefined) {
      return { refusal: 'PEER_BAD_REQUEST', detail: `from=${String(fromRaw)} to=${String(to)} cluster=${String(cluster)}` };
    }
    if (cluster !== this.opts.clusterId) {
      return { refusal: 'PEER_CLUSTER_ID_MISMATCH', detail: `local=${hexOf(this.opts.clusterId)} remote=${hexOf(cluster)} from=${from.toString(16)}` };
    }
    if (to !== String(this.opts.memberId)) {
      return { refusal: 'PEER_WRONG_RECIPIENT', detail: `this member is ${this.opts.memberId.toString(16)}, the call is for ${hexOf(to)}` };
    }
    if (this.opts.isRemoved(from)) return { refusal: 'PEER_MEMBER_REMOVED', detail: `member ${from.toString(16)} was removed` };
    return { from };
  }

  /** Admits a call or answers it with the refusal (logged once per peer and reason). */
  private admitOrRefuse(one: (key: string) => string | undefined, refuse: (status: Partial<ServiceError>) => void, peerAddr: string): NodeId | undefined {
    const a = this.admit(one);
    if ('from' in a) return a.from;
    this.opts.warnOnce(`refusal:${String(one(MD_FROM))}:${a.refusal}`, { refusal: a.refusal, detail: a.detail, remote: peerAddr }, 'refused a peer call');
    refuse(refusalStatus(a.refusal, a.detail) as Partial<ServiceError>);
    return undefined;
  }

  private onSend(call: ServerReadableStream<SendBatch, WireSendSummary>, callback: sendUnaryData<WireSendSummary>): void {
    this.openSend(grpcSendCall(call, callback));
  }

  /** A peer's message stream, served by grpc-js or straight off HTTP/2 (peer/send-call.ts). */
  private openSend(call: SendCall): void {
    const from = this.admitOrRefuse((k) => call.header(k), (s) => call.end(s), call.peer);
    if (from === undefined) return;
    let batches = 0;
    let messages = 0;
    let ended = false;
    const end = (s: Partial<ServiceError> | null): void => {
      if (this.streams.get(from) === end) this.streams.delete(from);
      if (ended) return;
      ended = true;
      call.end(s ?? { batches, messages });
    };
    // A sender dials again only after its old stream failed, so an older stream still open is dead.
    this.streams.get(from)?.({ code: status.ABORTED, details: 'superseded by a newer stream from the same member' });
    this.streams.set(from, end);
    // Response headers now tell the sender it is connected, long before the stream's one answer.
    call.accept();
    this.opts.onInboundStream?.(from);
    const stats = this.statsFor(from);
    call.listen({
      batch: (batch) => {
        if (ended) return;
        batches++;
        stats.batches++;
        messages += batch.messages.length;
        this.deliver(from, stats, batch);
      },
      ended: () => end(null),
      cancelled: () => {
        ended = true;
        if (this.streams.get(from) === end) this.streams.delete(from);
      },
    });
  }

  /** Hands a batch's messages to the member, one by one; one it cannot take does not end the stream. */
  private deliver(from: NodeId, stats: InboundStats, batch: SendBatch): void {
    for (const m of batch.messages) {
      stats.messages++;
      if (m instanceof PeerCodecError) {
        stats.failures++;
        this.opts.warnOnce(`undecodable:${from}`, { from, err: m.message }, 'dropped an undecodable peer message');
        continue;
      }
      if (m.type === 'snap') {
        // Snapshots travel through the Snapshot RPC with their data; a bare one here is a sender bug.
        stats.failures++;
        this.opts.warnOnce(`snap-on-stream:${from}`, { from: from.toString(16) }, "dropped a 'snap' message sent on the message stream");
        continue;
      }
      for (const e of m.entries) stats.bytes += e.data.length;
      try {
        this.opts.handlers.onMessage(m);
      } catch (err) {
        // One message the member cannot take (say, from a peer it no longer knows) must not end the stream.
        stats.failures++;
        this.opts.log.debug({ from: from.toString(16), type: m.type, err: (err as Error).message }, 'member refused a peer message');
      }
    }
  }

  private onSnapshot(call: ServerReadableStream<WireSnapshotChunk, Empty>, callback: sendUnaryData<Empty>): void {
    call.on('error', () => {});
    const from = this.admitOrRefuse(headerOf(call.metadata), (s) => callback(s), call.getPeer());
    if (from === undefined) return;
    this.receiveSnapshot(from, call).then(
      () => callback(null, {}),
      (err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        this.opts.log.warn({ from: from.toString(16), err: message }, 'snapshot from peer failed');
        callback({ code: status.ABORTED, details: `snapshot not staged: ${message}` });
      },
    );
  }

  private async receiveSnapshot(from: NodeId, call: ServerReadableStream<WireSnapshotChunk, Empty>): Promise<void> {
    const it = call[Symbol.asyncIterator]() as AsyncIterator<WireSnapshotChunk>;
    try {
      const first = await it.next();
      if (first.done || first.value.part !== 'header') throw new PeerError('PEER_SNAPSHOT_FAILED', 'snapshot stream does not start with its header');
      const m = messageFromWire(first.value.header);
      if (m.type !== 'snap' || !m.snapshot) throw new PeerError('PEER_SNAPSHOT_FAILED', `snapshot header is a '${m.type}' message without a snapshot`);
      const stats = this.statsFor(from);
      const log = this.opts.log;
      async function* kv(): AsyncGenerator<Uint8Array> {
        let chunks = 0;
        let bytes = 0;
        for (;;) {
          // A cancelled call rejects here (the stream is destroyed), so a cut snapshot never looks whole.
          const r = await it.next();
          if (r.done) throw new PeerError('PEER_SNAPSHOT_FAILED', 'snapshot stream ended before its trailer');
          const c = r.value;
          if (c.part === 'kv') {
            for (const chunk of c.kv.chunks) {
              chunks++;
              bytes += chunk.length;
              stats.bytes += chunk.length;
              yield plainBytes(chunk);
            }
          } else if (c.part === 'trailer') {
            if (wireCount(c.trailer.chunks, 'trailer chunks') !== chunks || wireCount(c.trailer.bytes, 'trailer bytes') !== bytes) {
              throw new PeerError('PEER_SNAPSHOT_FAILED', `snapshot trailer says ${c.trailer.chunks} chunks/${c.trailer.bytes} bytes, received ${chunks}/${bytes}`);
            }
            log.info({ from: from.toString(16), index: m.snapshot?.metadata.index, chunks, bytes }, 'received snapshot');
            return;
          } else {
            throw new PeerError('PEER_SNAPSHOT_FAILED', 'second header in a snapshot stream');
          }
        }
      }
      await this.opts.handlers.receiveSnapshot(m, kv());
      stats.snapshots++;
    } finally {
      // Whatever the member left unread is of no use now; stop reading the call.
      await it.return?.();
    }
  }

  /**
   * A call a follower forwards to the leader: admitted as any peer call, answered with the member's result
   * or its error; UNIMPLEMENTED when the member has no handler for it (`run` undefined).
   */
  private forwarded<Req, Res>(call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>, what: string, run: (() => Promise<Res>) | undefined): void {
    if (this.admitOrRefuse(headerOf(call.metadata), (s) => callback(s), call.getPeer()) === undefined) return;
    if (!run) {
      callback({ code: status.UNIMPLEMENTED, details: `this member does not take forwarded ${what}` });
      return;
    }
    run().then(
      (r) => callback(null, r),
      (err: unknown) => callback(handlerError(err)),
    );
  }

  private onLeaseKeepAlive(
    call: ServerUnaryCall<WireLeaseKeepAliveRequest, WireLeaseKeepAliveResponse>,
    callback: sendUnaryData<WireLeaseKeepAliveResponse>,
  ): void {
    this.forwarded(call, callback, 'lease keep-alives', async () => ({ ttl: (await this.opts.handlers.leaseKeepAlive(call.request.id)).ttl }));
  }

  private onLeaseTimeToLive(
    call: ServerUnaryCall<WireLeaseTimeToLiveRequest, WireLeaseTimeToLiveResponse>,
    callback: sendUnaryData<WireLeaseTimeToLiveResponse>,
  ): void {
    this.forwarded(call, callback, 'lease lookups', async () => {
      const r = await this.opts.handlers.leaseTimeToLive(call.request.id, call.request.keys);
      return { ttl: r.ttl, grantedTtl: r.grantedTtl, keys: r.keys };
    });
  }

  private onMemberPromote(
    call: ServerUnaryCall<WireMemberPromoteRequest, WireMemberPromoteResponse>,
    callback: sendUnaryData<WireMemberPromoteResponse>,
  ): void {
    const promote = this.opts.handlers.memberPromote?.bind(this.opts.handlers);
    this.forwarded(call, callback, 'promotions', promote && (async () => ({ members: (await promote(wireNodeId(call.request.id, 'member id'))).members.map(memberToWire) })));
  }

  /** Admitted without identity metadata: a joining member does not know the cluster id yet. */
  private onMembers(_call: ServerUnaryCall<Empty, { membership: Uint8Array }>, callback: sendUnaryData<{ membership: Uint8Array }>): void {
    const info = this.opts.handlers.clusterInfo;
    if (!info) {
      callback({ code: status.UNIMPLEMENTED, details: 'this member does not share its membership' });
      return;
    }
    callback(null, { membership: info() });
  }

  private onProbe(call: ServerUnaryCall<Empty, Empty>, callback: sendUnaryData<Empty>): void {
    if (this.admitOrRefuse(headerOf(call.metadata), (s) => callback(s), call.getPeer()) === undefined) return;
    callback(null, {});
  }
}

/** An etcd error keeps its gRPC code, message and identity across the hop; anything else is UNKNOWN. */
function handlerError(err: unknown): Partial<ServiceError> {
  if (err instanceof EtcdError) {
    const metadata = new Metadata();
    metadata.set(MD_ETCD_ERROR, err.code);
    return { code: err.grpcCode, details: err.message, metadata };
  }
  return { code: status.UNKNOWN, details: err instanceof Error ? err.message : String(err) };
}

/** A decimal uint64 from the identity metadata in hex, as etcd prints ids; anything else as it came. */
function hexOf(decimal: string): string {
  return /^\d{1,20}$/.test(decimal) ? BigInt(decimal).toString(16) : decimal;
}
