// The lease operations a member asks of whatever holds its Lessor — the store (KvStore) or the
// simulation's stand-in (SimKv) — answered from that Lessor, so what lives in the store is changed only
// through the store. Grants and revocations are the holder's own: they touch its data too.
import type { Lessor, LeaseTimeToLive } from './lessor.js';

export abstract class LeaseClocks {
  protected abstract readonly lessor: Lessor;

  /** This member became leader: it runs the lease clocks, every lease extended by `extendMs`. */
  leasePromote(extendMs: number): void {
    this.lessor.promote(extendMs);
  }

  /** This member stopped leading: lease clocks stop until it leads again. */
  leaseDemote(): void {
    this.lessor.demote();
  }

  /** A keep-alive on the leader: the lease's TTL (0 when there is no such lease). */
  leaseRenew(id: string): number {
    return this.lessor.renew(id);
  }

  leaseTimeToLive(id: string, withKeys: boolean): LeaseTimeToLive {
    return this.lessor.timeToLive(id, withKeys);
  }

  leaseList(): string[] {
    return this.lessor.list();
  }

  /** Leader only: up to `limit` leases whose time is up, to be revoked through Raft. */
  expiredLeases(limit?: number): string[] {
    return this.lessor.expired(limit);
  }
}
