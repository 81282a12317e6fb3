// The state every part of a member shares: the core, the store, the transport, the membership and who
// leads. Member builds it at start; the Ready loop, the applier, the proposals, the leases, the membership
// changes and the snapshot hand-off each hold it instead of reaching into one another.
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { NodeId, SoftState } from '../../raft/types.js';
import type { RawNode } from '../../raft/raw-node.js';
import type { DurableRaftStorage } from '../../storage/raft-storage.js';
import type { KvStore } from '../../kv/kv-store.js';
import type { Membership } from './membership.js';
import type { MemberConfig } from './member-config.js';
import type { PeerTransport } from './transport-api.js';
import type { MemberClock } from './member-clock.js';
import { NONE } from '../../raft/types.js';
import { realClock } from './member-clock.js';

/**
 * `K` is the key-value store's type: a member's KvStore; the simulation gives the same parts an in-memory
 * store, and each part names only the store operations it calls (Applier: ApplyStore, Leases: LeaseStore).
 */
export class MemberCore<K = KvStore> {
  readonly log: Logger;
  /** etcd's request timeout: 5 s plus twice the election timeout. */
  readonly requestTimeoutMs: number;
  /** Node's timers in a process; the simulation's virtual time under src/sim/member-loop/. */
  readonly clock: MemberClock;
  // Set once by Member.start, before anything else runs.
  node!: RawNode;
  storage!: DurableRaftStorage;
  kv!: K;
  transport!: PeerTransport;
  /** Replaced whole when a snapshot from the leader is installed. */
  membership!: Membership;
  memberId: NodeId = NONE;
  softState: SoftState = { lead: NONE, raftState: 'follower' };
  stopped = false;
  /** Runs the Ready loop until the core has nothing more to say (Member wires it to the loop). */
  kick: () => void = () => undefined;
  private reqSeq = 0;
  /** This start's wall-clock time, base 36: the part of request ids that differs from one start to the next. */
  private readonly startedAt: string;

  constructor(readonly cfg: MemberConfig) {
    this.log = cfg.logger.child({ component: 'member', name: cfg.name });
    this.requestTimeoutMs = 5000 + 2 * cfg.electionMs;
    this.clock = cfg.clock ?? realClock;
    this.startedAt = Math.floor(this.clock.epochMs()).toString(36);
  }

  get memberDir(): string {
    return join(this.cfg.dataDir, 'member');
  }

  isLeader(): boolean {
    return this.softState.raftState === 'leader';
  }

  /**
   * Request ids key the proposal waiters, so they must never repeat, across restarts too (as etcd's
   * idutil generator: member id, start time, counter). A counter alone started again at 0 after a restart,
   * and an entry proposed before the crash, committed after it, settled the waiter of a new request that
   * drew the same id: the client got another request's answer (found by the member-loop simulation).
   */
  nextReqId(): string {
    return `${this.memberId.toString(36)}.${this.startedAt}.${(this.reqSeq++).toString(36)}`;
  }
}
