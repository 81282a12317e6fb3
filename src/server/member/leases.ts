// Leases on a member: grants and revocations go through Raft; keep-alives and TTL questions are answered
// by the leader's own leases (a follower forwards them); the leader proposes the revocation of expired leases,
// since work that must be replicated goes through Raft even when only the leader decides it.
import { randomBytes } from 'node:crypto';
import type { MemberCore } from './member-core.js';
import type { KvStore } from '../../kv/kv-store.js';
import type { Proposals } from './proposals.js';
import type { InternalRequest } from './requests.js';
import { NONE } from '../../raft/types.js';
import { etcdError } from '../../kv/errors.js';

export type TimeToLive = { id: string; ttl: number; grantedTtl: number; keys: Uint8Array[] };

/** How many expired leases one sweep proposes to revoke at most. */
const EXPIRE_BATCH = 500;

/** What leases need of the key-value store: a member's KvStore, or the simulation's in-memory one. */
export type LeaseStore = Pick<KvStore, 'leaseRenew' | 'leaseTimeToLive' | 'leaseList' | 'expiredLeases' | 'leasePromote' | 'leaseDemote'>;

export class Leases {
  /** Leases whose revocation this leader proposed and that have not applied yet. */
  private readonly revoking = new Set<string>();

  constructor(
    private readonly c: MemberCore<LeaseStore>,
    private readonly proposals: Proposals,
    /** Linearizes a read (ReadIndex), as a Range does. */
    private readonly linearize: () => Promise<void>,
    /** Refuses a write that would take the store past its quota. */
    private readonly checkQuota: (cost: number) => void,
  ) {}

  grant(id: string, ttl: number): Promise<{ id: string; ttl: number }> {
    this.checkQuota(64);
    const lease = id === '0' || id === '' ? randomLeaseId() : id;
    return this.proposals.proposeRequest<{ id: string; ttl: number }>({ t: 'leaseGrant', id: this.c.nextReqId(), lease, ttl });
  }

  /** `asCaller`: a client's revocation carries its caller while auth is on (the expiry sweep's does not). */
  revoke(id: string, asCaller: (r: InternalRequest) => InternalRequest = (r) => r): Promise<{ revision: number }> {
    return this.proposals.proposeRequest<{ revision: number }>(asCaller({ t: 'leaseRevoke', id: this.c.nextReqId(), lease: id }));
  }

  async keepAlive(id: string): Promise<{ id: string; ttl: number }> {
    if (this.c.isLeader()) return { id, ttl: await this.renewAsLeader(id) };
    const lead = this.c.softState.lead;
    if (lead === NONE) throw etcdError('NO_LEADER');
    return { id, ttl: (await this.c.transport.leaseKeepAlive(lead, id)).ttl };
  }

  /** Leader only (asked by a client or by a follower that forwarded the keep-alive). */
  async renewAsLeader(id: string): Promise<number> {
    await this.proposals.waitAppliedCommitted();
    return this.c.kv.leaseRenew(id);
  }

  async timeToLive(id: string, keys: boolean): Promise<TimeToLive> {
    if (this.c.isLeader()) return this.localTimeToLive(id, keys);
    const lead = this.c.softState.lead;
    if (lead === NONE) throw etcdError('NO_LEADER');
    return { id, ...(await this.c.transport.leaseTimeToLive(lead, id, keys)) };
  }

  localTimeToLive(id: string, keys: boolean): TimeToLive {
    const t = this.c.kv.leaseTimeToLive(id, keys);
    return { id, ttl: t.ttl, grantedTtl: t.grantedTtl, keys: t.keys.map((k) => Buffer.from(k, 'latin1')) };
  }

  async list(): Promise<{ ids: string[] }> {
    await this.linearize();
    return { ids: this.c.kv.leaseList() };
  }

  /** Leader only: proposes the revocation of leases whose time is up. */
  expire(): void {
    if (!this.c.isLeader() || this.c.stopped) return;
    for (const id of this.c.kv.expiredLeases(EXPIRE_BATCH)) {
      if (this.revoking.has(id)) continue;
      this.revoking.add(id);
      this.c.log.debug({ lease: id }, 'lease expired');
      this.revoke(id).catch(() => this.revoking.delete(id));
    }
  }

  onRevoked(id: string): void {
    this.revoking.delete(id);
  }

  /** Only the leader runs lease clocks; a new leader extends every lease so a failover does not expire them all. */
  onRoleChange(wasLeader: boolean, isLeader: boolean): void {
    if (isLeader && !wasLeader) this.c.kv.leasePromote(this.c.cfg.electionMs);
    else if (!isLeader && wasLeader) this.c.kv.leaseDemote();
  }
}

/** Lease ids are positive int64s chosen by the member that proposes the grant. */
function randomLeaseId(): string {
  const b = randomBytes(8);
  b[0] = (b[0] as number) & 0x7f;
  const id = b.readBigUInt64BE(0);
  return (id === 0n ? 1n : id).toString();
}
