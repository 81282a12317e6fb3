// Everything the transport keeps for one peer: its URLs, the outbound message stream, the channel for
// probes and forwarded calls (leases, promotions), the round-trip time those probes measure, and the
// snapshot in flight.
import { status } from '@grpc/grpc-js';
import type { Client, MethodDefinition, ServiceError } from '@grpc/grpc-js';
import { EtcdError } from '../../kv/errors.js';
import type { EtcdErrorCode } from '../../kv/errors.js';
import type { Message, NodeId } from '../../raft/types.js';
import type { MemberInfo } from '../member/store-api.js';
import type { OutboundHooks } from '../member/transport-api.js';
import { newPeerClient } from './channel.js';
import { memberFromWire, plainBytes, wireInt } from './codec.js';
import type { PeerTls, PeerUrl } from './credentials.js';
import { PeerError, peerErrorOf } from './errors.js';
import { callMetadata, MD_ETCD_ERROR, peerService } from './proto.js';
import { openSendStream } from './send-client.js';
import { PeerStream } from './stream.js';
import type { EnqueueResult, PeerStreamDeps, PeerStreamStats } from './stream.js';
import { sendSnapshot } from './snapshot-sender.js';

export interface PeerRemoteDeps extends Pick<PeerStreamDeps, 'self' | 'peer' | 'clusterId' | 'timings' | 'limits' | 'log'> {
  readonly tls: PeerTls | undefined;
  readonly hooks: OutboundHooks;
}

export interface PeerRemoteStats extends PeerStreamStats {
  queued: number;
  active: boolean;
  snapshotsSent: number;
  snapshotsFailed: number;
}

/** Smoothing of the round-trip time: each probe moves the estimate a quarter of the way. */
const RTT_WEIGHT = 0.25;

export class PeerRemote {
  private urls: readonly PeerUrl[];
  private readonly stream: PeerStream;
  private rpcClient: Client | undefined;
  private rpcUrlIndex = 0;
  private readonly probeTimer: NodeJS.Timeout;
  private probing = false;
  private rttSeconds: number | undefined;
  /** performance.now() of the last completed round trip to the peer (accepted stream, probe, snapshot). */
  private lastRoundTrip = Number.NEGATIVE_INFINITY;
  private snapshotAbort: AbortController | undefined;
  private stopped = false;
  private snapshotsSent = 0;
  private snapshotsFailed = 0;

  constructor(
    private readonly deps: PeerRemoteDeps,
    urls: readonly PeerUrl[],
  ) {
    this.urls = urls;
    const { self, peer, clusterId, timings, limits, log } = deps;
    this.stream = new PeerStream({
      self,
      peer,
      clusterId,
      timings,
      limits,
      log,
      urls: () => this.urls,
      open: (url, on) => openSendStream({ url, tls: deps.tls, timings: deps.timings, from: self, to: peer, clusterId }, on),
      onUnreachable: () => deps.hooks.reportUnreachable(deps.peer),
      onLost: () => deps.hooks.connectionLost?.(deps.peer),
      onAccepted: () => this.touch(),
      onRemoved: () => deps.hooks.removedFromCluster?.(),
    });
    this.stream.start();
    this.probeTimer = setInterval(() => this.probe(), deps.timings.probeIntervalMs);
    this.probeTimer.unref();
  }

  send(m: Message): EnqueueResult {
    if (m.type === 'snap') {
      this.startSnapshot(m);
      return 'queued';
    }
    return this.stream.enqueue(m);
  }

  update(urls: readonly PeerUrl[]): void {
    if (urls.length === this.urls.length && urls.every((u, i) => u.url === this.urls[i]?.url)) return;
    this.urls = urls;
    this.resetRpc();
    this.stream.redial();
  }

  /** The peer opened its message stream to us (see PeerStream.peerIsUp). */
  peerIsUp(): void {
    this.stream.peerIsUp();
  }

  isActive(): boolean {
    return this.stream.active && performance.now() - this.lastRoundTrip <= this.deps.timings.activeWindowMs;
  }

  roundTripSeconds(): number | undefined {
    return this.rttSeconds;
  }

  stats(): PeerRemoteStats {
    return {
      ...this.stream.stats,
      queued: this.stream.queued,
      active: this.isActive(),
      snapshotsSent: this.snapshotsSent,
      snapshotsFailed: this.snapshotsFailed,
    };
  }

  async leaseKeepAlive(id: string): Promise<{ ttl: number }> {
    const r = await this.unary(peerService().leaseKeepAlive, { id }, this.deps.timings.leaseCallTimeoutMs);
    return { ttl: wireInt(r.ttl, 'ttl') };
  }

  async leaseTimeToLive(id: string, keys: boolean): Promise<{ ttl: number; grantedTtl: number; keys: Uint8Array[] }> {
    const r = await this.unary(peerService().leaseTimeToLive, { id, keys }, this.deps.timings.leaseCallTimeoutMs);
    return { ttl: wireInt(r.ttl, 'ttl'), grantedTtl: wireInt(r.grantedTtl, 'granted ttl'), keys: r.keys.map(plainBytes) };
  }

  async memberPromote(id: NodeId): Promise<{ members: MemberInfo[] }> {
    const r = await this.unary(peerService().memberPromote, { id }, this.deps.timings.promoteCallTimeoutMs);
    return { members: r.members.map(memberFromWire) };
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.probeTimer);
    this.stream.stop();
    this.snapshotAbort?.abort();
    this.resetRpc();
  }

  private touch(): void {
    this.lastRoundTrip = performance.now();
  }

  private rpc(): Client {
    if (!this.rpcClient) {
      const url = this.urls[this.rpcUrlIndex % this.urls.length];
      if (!url) throw new PeerError('PEER_CONFIG', `peer ${this.deps.peer} has no URLs`);
      this.rpcClient = newPeerClient(url, this.deps.tls, this.deps.timings);
    }
    return this.rpcClient;
  }

  /** Drops the channel of probes and forwarded calls; the next call dials afresh (see newPeerClient on blackholes). */
  private resetRpc(): void {
    this.rpcClient?.close();
    this.rpcClient = undefined;
  }

  private unary<Req, Res>(method: MethodDefinition<Req, Res>, req: Req, timeoutMs: number): Promise<Res> {
    if (this.stopped) return Promise.reject(new PeerError('PEER_CLOSED', `peer ${this.deps.peer} is no longer a peer`));
    let client: Client;
    try {
      client = this.rpc();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const md = callMetadata(this.deps.self, this.deps.peer, this.deps.clusterId);
    return new Promise<Res>((resolve, reject) => {
      client.makeUnaryRequest<Req, Res>(method.path, method.requestSerialize, method.responseDeserialize, req, md, { deadline: Date.now() + timeoutMs }, (err, res) => {
        if (!err && res !== undefined) {
          this.touch();
          resolve(res);
          return;
        }
        if (err) reject(this.callError(err, client));
        else reject(new PeerError('PEER_UNREACHABLE', `peer ${this.deps.peer}: empty answer`));
      });
    });
  }

  /** A failed call as the error our caller should see; a connection-level failure also redials. */
  private callError(err: ServiceError, client: Client): Error {
    const etcdCode = err.metadata?.get(MD_ETCD_ERROR)[0];
    if (typeof etcdCode === 'string') {
      try {
        return new EtcdError(etcdCode as EtcdErrorCode);
      } catch {
        // A code this member does not know (a newer peer): fall through to the plain error.
      }
    }
    if ((err.code === status.UNAVAILABLE || err.code === status.DEADLINE_EXCEEDED) && this.rpcClient === client) {
      this.rpcUrlIndex++;
      this.resetRpc();
    }
    return peerErrorOf(err, this.deps.peer);
  }

  private probe(): void {
    if (this.probing || this.stopped) return;
    this.probing = true;
    const started = performance.now();
    this.unary(peerService().probe, {}, this.deps.timings.probeTimeoutMs).then(
      () => {
        const rtt = (performance.now() - started) / 1000;
        this.rttSeconds = this.rttSeconds === undefined ? rtt : this.rttSeconds + RTT_WEIGHT * (rtt - this.rttSeconds);
        this.probing = false;
      },
      (err: unknown) => {
        this.probing = false;
        this.deps.log.trace({ peer: this.deps.peer.toString(16), err: (err as Error).message }, 'probe failed');
      },
    );
  }

  private startSnapshot(m: Message): void {
    if (this.stopped) return;
    if (this.snapshotAbort) {
      // The core asks for one snapshot per follower at a time; the report of the one in flight answers it.
      this.deps.log.debug({ peer: this.deps.peer.toString(16) }, 'snapshot already in flight to this peer; ignoring another');
      return;
    }
    const url = this.urls[this.rpcUrlIndex % this.urls.length];
    const { hooks, peer, log } = this.deps;
    if (!url) {
      queueMicrotask(() => hooks.reportSnapshot(peer, false));
      return;
    }
    const abort = new AbortController();
    this.snapshotAbort = abort;
    const client = newPeerClient(url, this.deps.tls, this.deps.timings);
    const started = performance.now();
    const index = m.snapshot?.metadata.index;
    log.info({ peer: peer.toString(16), index }, 'sending snapshot');
    void (async () => {
      try {
        const r = await sendSnapshot({
          client,
          metadata: callMetadata(this.deps.self, peer, this.deps.clusterId),
          peer,
          message: m,
          kv: hooks.kvSnapshot(),
          stallTimeoutMs: this.deps.timings.snapshotStallTimeoutMs,
          signal: abort.signal,
        });
        this.snapshotsSent++;
        this.touch();
        log.info({ peer: peer.toString(16), index, chunks: r.chunks, bytes: r.bytes, ms: Math.round(performance.now() - started) }, 'sent snapshot');
        if (!abort.signal.aborted) hooks.reportSnapshot(peer, true);
      } catch (err) {
        this.snapshotsFailed++;
        if (abort.signal.aborted) return;
        log.warn({ peer: peer.toString(16), index, err: (err as Error).message }, 'snapshot send failed');
        // As etcd: the peer is unreachable for now, and the core retries the snapshot later.
        hooks.reportUnreachable(peer);
        hooks.reportSnapshot(peer, false);
      } finally {
        client.close();
        if (this.snapshotAbort === abort) this.snapshotAbort = undefined;
      }
    })();
  }
}
