// Leases: a TTL that keys can be attached to. Every member keeps the same leases (grant and revoke are
// applied from the log), but only the primary — the Raft leader — runs expiry clocks. When a lease
// expires the primary proposes its revocation through Raft, so all members delete the keys together.
// On promotion every expiry is pushed out by the election timeout, so a failover does not expire
// every lease at once.
import { etcdError } from './errors.js';

/** etcd's cap: a TTL above this many seconds is refused. */
export const MAX_LEASE_TTL = 9_000_000_000;

export interface Lease {
  readonly id: string;
  /** Granted TTL in seconds (after the minimum was applied). */
  readonly ttl: number;
  /** Wall-clock expiry in ms on the primary; Infinity on a non-primary. */
  expiry: number;
  readonly keys: Set<string>;
}

export interface LeaseTimeToLive {
  readonly id: string;
  /** Remaining seconds, or -1 if the lease does not exist. */
  readonly ttl: number;
  readonly grantedTtl: number;
  readonly keys: string[];
}

export class Lessor {
  private readonly leases = new Map<string, Lease>();
  private primary = false;

  constructor(
    /** Minimum TTL in seconds (etcd: ceil(3/2 × election timeout)). */
    readonly minTtl: number,
    private readonly now: () => number,
  ) {}

  /** Forgets every lease (before loading a snapshot). */
  clear(): void {
    this.leases.clear();
  }

  isPrimary(): boolean {
    return this.primary;
  }

  /** Applies a grant. Throws LEASE_EXIST or LEASE_TTL_TOO_LARGE. */
  grant(id: string, ttl: number): Lease {
    if (id === '0') throw etcdError('LEASE_NOT_FOUND');
    if (ttl > MAX_LEASE_TTL) throw etcdError('LEASE_TTL_TOO_LARGE');
    if (this.leases.has(id)) throw etcdError('LEASE_EXIST');
    const effective = Math.max(ttl, this.minTtl);
    const l: Lease = { id, ttl: effective, expiry: this.primary ? this.now() + effective * 1000 : Infinity, keys: new Set() };
    this.leases.set(id, l);
    return l;
  }

  /** Restores a lease from disk (no validation, no expiry until promoted). */
  restore(id: string, ttl: number): void {
    this.leases.set(id, { id, ttl, expiry: this.primary ? this.now() + ttl * 1000 : Infinity, keys: new Set() });
  }

  lookup(id: string): Lease | undefined {
    return this.leases.get(id);
  }

  /** Removes the lease and returns the keys that must be deleted with it. Throws LEASE_NOT_FOUND. */
  revoke(id: string): string[] {
    const l = this.leases.get(id);
    if (!l) throw etcdError('LEASE_NOT_FOUND');
    this.leases.delete(id);
    return [...l.keys].sort();
  }

  attach(id: string, key: string): void {
    this.leases.get(id)?.keys.add(key);
  }

  detach(id: string, key: string): void {
    this.leases.get(id)?.keys.delete(key);
  }

  /** Primary only: restarts the lease's clock. Returns the TTL, or 0 if the lease is unknown. */
  renew(id: string): number {
    const l = this.leases.get(id);
    if (!l) return 0;
    if (this.primary) l.expiry = this.now() + l.ttl * 1000;
    return l.ttl;
  }

  timeToLive(id: string, withKeys: boolean): LeaseTimeToLive {
    const l = this.leases.get(id);
    if (!l) return { id, ttl: -1, grantedTtl: 0, keys: [] };
    // etcd truncates the remaining seconds (int64(Remaining().Seconds())): a fresh 100 s lease shows 99.
    const remaining = l.expiry === Infinity ? l.ttl : Math.max(0, Math.floor((l.expiry - this.now()) / 1000));
    return { id, ttl: remaining, grantedTtl: l.ttl, keys: withKeys ? [...l.keys].sort() : [] };
  }

  list(): string[] {
    return [...this.leases.keys()];
  }

  /** Becomes the primary: every lease gets its full TTL again plus `extendMs` (the election timeout). */
  promote(extendMs: number): void {
    this.primary = true;
    const now = this.now();
    for (const l of this.leases.values()) l.expiry = now + l.ttl * 1000 + extendMs;
  }

  demote(): void {
    this.primary = false;
    for (const l of this.leases.values()) l.expiry = Infinity;
  }

  /** Primary only: leases whose time is up, oldest first, at most `limit`. */
  expired(limit = 1000): string[] {
    if (!this.primary) return [];
    const now = this.now();
    const out: Lease[] = [];
    for (const l of this.leases.values()) if (l.expiry <= now) out.push(l);
    out.sort((a, b) => a.expiry - b.expiry);
    return out.slice(0, limit).map((l) => l.id);
  }
}
