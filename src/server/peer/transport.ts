// The peer transport of a store member (PeerTransport in member/transport-api.ts) over gRPC: a Peer server on
// the member's listen URLs for what peers send us, and per peer a PeerRemote for what we send them.
// send() only queues; every hook (reportUnreachable, reportSnapshot) is called later, never from inside
// send(), so the member's Ready loop is never re-entered.
import type { Logger } from 'pino';
import type { Message, NodeId } from '../../raft/types.js';
import { isLocalMessage, isNodeId } from '../../raft/types.js';
import type { MemberInfo } from '../member/store-api.js';
import type { InboundHandlers, OutboundHooks, PeerTransport } from '../member/transport-api.js';
import { peerTimings } from './channel.js';
import type { PeerTimings } from './channel.js';
import { loadPeerTls, parsePeerUrl } from './credentials.js';
import type { PeerTls, PeerTlsOptions } from './credentials.js';
import { PeerError } from './errors.js';
import { PeerRemote } from './remote.js';
import type { PeerRemoteStats } from './remote.js';
import { PeerServer } from './server.js';
import type { InboundStats } from './server.js';
import { DEFAULT_STREAM_LIMITS } from './stream.js';
import type { PeerStreamLimits } from './stream.js';

export interface PeerTransportOptions {
  readonly memberId: NodeId;
  /** uint64 in decimal, as in response headers. */
  readonly clusterId: string;
  /** --listen-peer-urls; port 0 picks a free port (see `addresses`). */
  readonly listenUrls: readonly string[];
  readonly tls?: PeerTlsOptions;
  readonly handlers: InboundHandlers;
  readonly hooks: OutboundHooks;
  readonly logger: Logger;
  readonly electionTimeoutMs: number;
  /** Overrides of the timings derived from electionTimeoutMs (tests, benchmarks). */
  readonly timings?: Partial<PeerTimings>;
  /**
   * Dial a peer's advertised URL through another address (advertised URL → dial URL). jepsen-lite uses
   * it to route each link through its own proxy; see parseDialMap for the SETPOINT_PEER_DIAL_MAP format.
   */
  readonly dialMap?: ReadonlyMap<string, string>;
  readonly limits?: Partial<PeerStreamLimits>;
  /** false: peers' message streams go through grpc-js instead of the HTTP/2 fast path (tests compare the two). */
  readonly fastSend?: boolean;
}

export interface PeerTransportStats {
  readonly outbound: ReadonlyMap<NodeId, PeerRemoteStats>;
  readonly inbound: ReadonlyMap<NodeId, Readonly<InboundStats>>;
}

export interface PeerTransportHandle extends PeerTransport {
  /** The URLs the server is bound to, with the real ports. */
  readonly addresses: string[];
  /** Counters for metrics and tests: writes, messages, bytes, drops, failures per peer and direction. */
  stats(): PeerTransportStats;
}

export async function createPeerTransport(opts: PeerTransportOptions): Promise<PeerTransportHandle> {
  if (!isNodeId(opts.memberId)) throw new PeerError('PEER_CONFIG', `peer transport: member id ${String(opts.memberId)} is not a uint64 other than 0`);
  if (!/^\d+$/.test(opts.clusterId)) throw new PeerError('PEER_CONFIG', `peer transport: cluster id ${JSON.stringify(opts.clusterId)} is not a decimal uint64`);
  const log = opts.logger.child({ component: 'peer-transport', member: opts.memberId.toString(16) });
  const tls = opts.tls ? await loadPeerTls(opts.tls) : undefined;
  for (const u of opts.listenUrls) {
    if (tls && !parsePeerUrl(u).secure) log.warn({ url: u }, 'scheme is http while peer key and cert files are present; serving plain text');
  }
  const transport = new GrpcPeerTransport(opts, tls, log);
  try {
    await transport.listen();
  } catch (err) {
    await transport.close();
    throw err;
  }
  return transport;
}

class GrpcPeerTransport implements PeerTransportHandle {
  addresses: string[] = [];
  private readonly remotes = new Map<NodeId, PeerRemote>();
  /** Removed members stay refused for good: etcd never reuses a member id. */
  private readonly removed = new Set<NodeId>();
  private readonly server: PeerServer;
  private readonly timings: PeerTimings;
  private readonly limits: PeerStreamLimits;
  private readonly warned = new Set<string>();
  private closed = false;

  constructor(
    private readonly opts: PeerTransportOptions,
    private readonly tls: PeerTls | undefined,
    private readonly log: Logger,
  ) {
    this.timings = peerTimings(opts.electionTimeoutMs, opts.timings);
    this.limits = { ...DEFAULT_STREAM_LIMITS, ...opts.limits };
    this.server = new PeerServer({
      memberId: opts.memberId,
      clusterId: opts.clusterId,
      listenUrls: opts.listenUrls,
      tls,
      handlers: opts.handlers,
      timings: this.timings,
      log,
      isRemoved: (id) => this.removed.has(id),
      warnOnce: (key, obj, msg) => this.warnOnce(key, obj, msg),
      onInboundStream: (from) => this.remotes.get(from)?.peerIsUp(),
      fastSend: opts.fastSend !== false,
    });
  }

  async listen(): Promise<void> {
    this.addresses = await this.server.listen();
    this.log.info({ addresses: this.addresses }, 'listening for peers');
  }

  send(msgs: readonly Message[]): void {
    if (this.closed) return;
    let unreachable: Set<NodeId> | undefined;
    for (const m of msgs) {
      const remote = this.remotes.get(m.to);
      if (!remote) {
        if (!this.removed.has(m.to)) this.warnOnce(`unknown:${m.to}`, { to: m.to, type: m.type }, 'dropped a message to an unknown peer');
        continue;
      }
      if (isLocalMessage(m.type)) {
        this.warnOnce(`local:${m.type}`, { type: m.type }, 'dropped a local message handed to the transport');
        continue;
      }
      if (remote.send(m) === 'dropped') (unreachable ??= new Set()).add(m.to);
    }
    if (unreachable) {
      // As etcd when a peer's buffer is full: tell the core, which stops streaming to it and probes.
      const ids = unreachable;
      queueMicrotask(() => {
        if (this.closed) return;
        for (const id of ids) if (this.remotes.has(id)) this.opts.hooks.reportUnreachable(id);
      });
    }
  }

  addPeer(id: NodeId, peerURLs: readonly string[]): void {
    if (this.closed) return;
    if (this.removed.has(id)) {
      this.log.warn({ peer: id.toString(16) }, 'not adding a removed member back');
      return;
    }
    if (id === this.opts.memberId) return;
    const urls = peerURLs.map((u) => parsePeerUrl(this.opts.dialMap?.get(u) ?? u));
    const existing = this.remotes.get(id);
    if (existing) {
      existing.update(urls);
      return;
    }
    const remote = new PeerRemote(
      {
        self: this.opts.memberId,
        peer: id,
        clusterId: this.opts.clusterId,
        timings: this.timings,
        limits: this.limits,
        tls: this.tls,
        hooks: this.guardedHooks(),
        log: this.log,
      },
      urls,
    );
    this.remotes.set(id, remote);
    this.log.info({ peer: id.toString(16), urls: peerURLs }, 'added peer');
  }

  updatePeer(id: NodeId, peerURLs: readonly string[]): void {
    if (!this.remotes.has(id)) this.log.warn({ peer: id.toString(16) }, 'updating an unknown peer adds it');
    this.addPeer(id, peerURLs);
  }

  removePeer(id: NodeId): void {
    this.removed.add(id);
    this.remotes.get(id)?.stop();
    this.remotes.delete(id);
    this.server.refuseFrom(id);
    this.log.info({ peer: id.toString(16) }, 'removed peer');
  }

  leaseKeepAlive(to: NodeId, id: string): Promise<{ ttl: number }> {
    return this.remote(to).then((r) => r.leaseKeepAlive(id));
  }

  leaseTimeToLive(to: NodeId, id: string, keys: boolean): Promise<{ ttl: number; grantedTtl: number; keys: Uint8Array[] }> {
    return this.remote(to).then((r) => r.leaseTimeToLive(id, keys));
  }

  memberPromote(to: NodeId, id: NodeId): Promise<{ members: MemberInfo[] }> {
    return this.remote(to).then((r) => r.memberPromote(id));
  }

  roundTripTimes(): ReadonlyMap<NodeId, number> {
    const out = new Map<NodeId, number>();
    for (const [id, r] of this.remotes) {
      const rtt = r.roundTripSeconds();
      if (rtt !== undefined) out.set(id, rtt);
    }
    return out;
  }

  isActive(id: NodeId): boolean {
    return this.remotes.get(id)?.isActive() ?? false;
  }

  activeSince(id: NodeId): number | undefined {
    const r = this.remotes.get(id);
    // A stream that is up but has seen no round trip lately (a blackhole) does not count as connected.
    return r?.isActive() === true ? r.stats().activeSince : undefined;
  }

  stats(): PeerTransportStats {
    const outbound = new Map<NodeId, PeerRemoteStats>();
    for (const [id, r] of this.remotes) outbound.set(id, r.stats());
    return { outbound, inbound: this.server.stats() };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const r of this.remotes.values()) r.stop();
    this.remotes.clear();
    await this.server.close();
    this.log.info('peer transport closed');
  }

  private remote(to: NodeId): Promise<PeerRemote> {
    if (this.closed) return Promise.reject(new PeerError('PEER_CLOSED', 'peer transport is closed'));
    const r = this.remotes.get(to);
    return r ? Promise.resolve(r) : Promise.reject(new PeerError('PEER_UNKNOWN', `peer transport: unknown peer ${to}`));
  }

  /** Hooks that go quiet once the transport is closed or the peer removed: no reports about the dead. */
  private guardedHooks(): OutboundHooks {
    const hooks = this.opts.hooks;
    return {
      reportUnreachable: (id) => {
        if (!this.closed && this.remotes.has(id)) hooks.reportUnreachable(id);
      },
      connectionLost: (id) => {
        if (!this.closed && this.remotes.has(id)) hooks.connectionLost?.(id);
      },
      reportSnapshot: (id, ok) => {
        if (!this.closed && this.remotes.has(id)) hooks.reportSnapshot(id, ok);
      },
      kvSnapshot: () => hooks.kvSnapshot(),
      removedFromCluster: () => {
        if (!this.closed) hooks.removedFromCluster?.();
      },
    };
  }

  private warnOnce(key: string, obj: Record<string, unknown>, msg: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.log.warn(obj, msg);
  }
}

/** Parses "advertisedURL=dialURL,advertisedURL2=dialURL2" (SETPOINT_PEER_DIAL_MAP). */
export function parseDialMap(s: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of (s ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`SETPOINT_PEER_DIAL_MAP: "${pair}" is not advertisedURL=dialURL`);
    out.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return out;
}
