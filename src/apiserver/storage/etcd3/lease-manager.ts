// Leases for objects with a TTL (Events: --event-ttl), shared as Kubernetes' lease manager shares them: a
// lease is granted a little longer than asked (min(60 s, 5% of the TTL)) and reused by every write within
// that window, and by at most 1000 objects, so a stream of Events costs the store a lease every minute,
// not one per Event. An object may so live up to the window longer than its TTL, never shorter.
import type { EtcdClient } from '../../../etcd-client/etcd-client.js';

export interface LeaseManagerOptions {
  readonly reuseDurationSeconds?: number;
  readonly reuseDurationPercent?: number;
  readonly maxObjectCount?: number;
  readonly now?: () => number;
}

interface Held {
  readonly id: string;
  /** When the lease expires (ms since the epoch) by this process' clock. */
  readonly expiresAt: number;
  uses: number;
}

export class LeaseManager {
  private readonly held = new Map<number, Held>();
  private readonly granting = new Map<number, Promise<Held>>();
  private readonly reuseSeconds: number;
  private readonly reusePercent: number;
  private readonly maxObjects: number;
  private readonly now: () => number;

  constructor(
    private readonly client: EtcdClient,
    opts: LeaseManagerOptions = {},
  ) {
    this.reuseSeconds = opts.reuseDurationSeconds ?? 60;
    this.reusePercent = opts.reuseDurationPercent ?? 0.05;
    this.maxObjects = opts.maxObjectCount ?? 1000;
    this.now = opts.now ?? Date.now;
  }

  /** A lease that outlives `ttlSeconds` from now by at most the reuse window. */
  async lease(ttlSeconds: number): Promise<string> {
    const reuse = Math.min(Math.floor(this.reusePercent * ttlSeconds), this.reuseSeconds);
    const prev = this.held.get(ttlSeconds);
    const now = this.now();
    // Valid: it outlives the TTL asked for. Sufficient: not by more than the window.
    if (prev && prev.uses < this.maxObjects && now + ttlSeconds * 1000 < prev.expiresAt && now + (ttlSeconds + reuse) * 1000 > prev.expiresAt) {
      prev.uses++;
      return prev.id;
    }
    // Writes that arrive together share one grant.
    let pending = this.granting.get(ttlSeconds);
    if (!pending) {
      pending = this.client.leaseGrant(ttlSeconds + reuse).then((g) => ({ id: g.id, expiresAt: now + (ttlSeconds + reuse) * 1000, uses: 0 }));
      this.granting.set(ttlSeconds, pending);
      void pending.then(
        (h) => {
          this.held.set(ttlSeconds, h);
          this.granting.delete(ttlSeconds);
        },
        () => this.granting.delete(ttlSeconds),
      );
    }
    const h = await pending;
    h.uses++;
    return h.id;
  }

  /** Forgets a lease the store no longer has (revoked, or expired early by a clock that ran slow here). */
  forget(id: string): void {
    for (const [ttl, h] of this.held) if (h.id === id) this.held.delete(ttl);
  }
}
