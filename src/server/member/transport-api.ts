// What a member needs from its peer transport: fire-and-forget delivery of Raft messages to peers,
// chunked snapshot transfer, and a few member-to-member calls (lease renewal and learner promotion on the
// leader).
import type { Message, NodeId } from '../../raft/types.js';
import type { MemberInfo } from './store-api.js';

export interface InboundHandlers {
  /** A Raft message from a peer (never a 'snap': those arrive through receiveSnapshot). */
  onMessage(m: Message): void;
  /**
   * A snapshot from the leader: `m` is the 'snap' message (its snapshot.data holds the small Raft-level
   * payload), `kv` the chunks of the key-value state, streamed. Resolve once it is staged and stepped.
   */
  receiveSnapshot(m: Message, kv: AsyncIterable<Uint8Array>): Promise<void>;
  /** Lease calls a follower forwards to the leader (only the leader runs lease clocks). */
  leaseKeepAlive(id: string): Promise<{ ttl: number }>;
  leaseTimeToLive(id: string, keys: boolean): Promise<{ ttl: number; grantedTtl: number; keys: Uint8Array[] }>;
  /**
   * A learner promotion a follower forwards to the leader (only the leader knows whether the learner is
   * in sync): check, propose, and answer with the member list once the promotion has applied. Every
   * member has it; a transport without it (a test or bench stand-in) answers UNIMPLEMENTED.
   */
  memberPromote?(id: NodeId): Promise<{ members: MemberInfo[] }>;
  /** The membership record, for a member joining the cluster (answered without identity checks). */
  clusterInfo?(): Uint8Array;
}

export interface OutboundHooks {
  /** The transport could not deliver to `id` (connection down): the core falls back to probing. */
  reportUnreachable(id: NodeId): void;
  /**
   * The open stream to `id` broke without a refusal (the connection was reset or closed under it): on
   * loopback or a live host that means the peer's process is gone. Optional: a stand-in may not report it.
   */
  connectionLost?(id: NodeId): void;
  /** A snapshot send to `id` finished (ok) or failed. */
  reportSnapshot(id: NodeId, ok: boolean): void;
  /** The key-value state to stream with a snapshot message, read at send time. */
  kvSnapshot(): AsyncIterable<Uint8Array>;
  /**
   * A peer refused this member as removed from the cluster. A removed follower may never apply its own
   * removal (the leader stops replicating to it once the removal applies), so this is how it learns
   * (etcd's rafthttp reports errMemberRemoved and the server stops).
   */
  removedFromCluster?(): void;
}

export interface PeerTransport {
  /** Sends messages; never blocks, never throws for a dead peer (it reports unreachable instead). */
  send(msgs: readonly Message[]): void;
  addPeer(id: NodeId, peerURLs: readonly string[]): void;
  updatePeer(id: NodeId, peerURLs: readonly string[]): void;
  removePeer(id: NodeId): void;
  /** Forwarded lease calls to the member `to` (the leader). */
  leaseKeepAlive(to: NodeId, id: string): Promise<{ ttl: number }>;
  leaseTimeToLive(to: NodeId, id: string, keys: boolean): Promise<{ ttl: number; grantedTtl: number; keys: Uint8Array[] }>;
  /** Forwards the promotion of learner `id` to the member `to` (the leader); its etcd errors come back as they are. */
  memberPromote(to: NodeId, id: NodeId): Promise<{ members: MemberInfo[] }>;
  /** Smoothed round-trip time to each peer in seconds (for the peer RTT metric). */
  roundTripTimes(): ReadonlyMap<NodeId, number>;
  /** Whether a peer has been reachable recently (etcd refuses some reconfigurations otherwise). */
  isActive(id: NodeId): boolean;
  /**
   * performance.now() when the link to a peer came up, if it is up (active) now; undefined otherwise. A
   * link that breaks starts over. etcd's strict reconfiguration check asks how long peers have been up.
   */
  activeSince(id: NodeId): number | undefined;
  close(): Promise<void>;
}
