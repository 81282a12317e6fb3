// What a store member is started with: etcd's flags as parsed by embed/, and the hooks that build its peer
// transport and ask an existing cluster who is who.
import type { Logger } from 'pino';
import type { NodeId } from '../../raft/types.js';
import type { InboundHandlers, OutboundHooks, PeerTransport } from './transport-api.js';
import type { MemberMetrics } from './member-metrics.js';
import type { MemberClock } from './member-clock.js';
import type { AuthOptions } from './auth-requests.js';

export interface MemberConfig {
  readonly name: string;
  readonly dataDir: string;
  /** This member's advertised peer and client URLs. */
  readonly peerURLs: readonly string[];
  readonly clientURLs: readonly string[];
  /** --initial-cluster parsed (name → peer URLs); --initial-cluster-state; --initial-cluster-token. */
  readonly initialCluster: ReadonlyMap<string, readonly string[]>;
  readonly initialClusterState: 'new' | 'existing';
  readonly initialClusterToken: string;
  readonly heartbeatMs: number;
  readonly electionMs: number;
  readonly snapshotCount: number;
  /** Entries kept behind a snapshot so a briefly lagging follower catches up from the log (etcd: 5000). */
  readonly snapshotCatchUpEntries: number;
  readonly quotaBackendBytes: number;
  /** etcd's --strict-reconfig-check (default on): refuse membership changes that could cost the quorum. */
  readonly strictReconfigCheck?: boolean;
  /** --auth-token-ttl and --bcrypt-cost (defaults: 300 s, 10). */
  readonly auth?: AuthOptions;
  readonly logger: Logger;
  readonly metrics?: MemberMetrics;
  /** TEST ONLY: serve linearizable reads locally, without ReadIndex (jepsen-lite proves it catches this). */
  readonly unsafeLocalReads?: boolean;
  /** TEST ONLY: as leader, wait this long before applying committed entries (the Ready loop waits too). */
  readonly leaderApplyDelayMs?: number;
  /** The clock and timers the proposals and reads use (default: Node's); the simulation gives its own. */
  readonly clock?: MemberClock;
  /** Builds the peer transport once the member knows its id and cluster id. */
  readonly transport: (ids: { memberId: NodeId; clusterId: NodeId }, handlers: InboundHandlers, hooks: OutboundHooks) => Promise<PeerTransport>;
  /** For a member joining an existing cluster: asks the peers listed in --initial-cluster who is who. */
  readonly fetchMembership?: (peerURLs: readonly string[]) => Promise<Uint8Array>;
}
