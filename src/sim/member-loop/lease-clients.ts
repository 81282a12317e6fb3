// Lease traffic for the member-loop simulation, and its check. Clients grant short leases through random
// members (the member's Leases, proposed through Raft), attach a key to each, and keep some alive through
// the leader; the leader's own expiry sweep proposes the revocation of the rest. Whoever proposed it,
// a revocation must not apply before the lease's TTL has run from the moment the grant was first applied
// anywhere (every leader's clock for it starts there or later).
import type { Rng } from '../../raft/rng.js';
import type { NodeId } from '../../raft/types.js';
import type { LeaseObserver } from './sim-kv.js';
import type { SimMember } from './sim-member.js';
import type { SimScheduler } from './sim-scheduler.js';
import { chance, pick } from '../random.js';
import { SimViolation } from '../violation.js';

export interface LeaseTarget {
  readonly now: number;
  readonly sched: SimScheduler;
  upNodes(): SimMember[];
  leader(): SimMember | undefined;
  note(text: string): void;
  /** Reports an error raised in a client's callback. */
  guard(fn: () => void): void;
}

/** Per tick: the chance of a grant, and of a keep-alive of a live lease. */
const GRANT_RATE = 0.08;
const KEEPALIVE_RATE = 0.3;
/** Seconds asked; the member raises it to its minimum (1.5 election timeouts). */
const TTL = 1;

export class LeaseClients {
  granted = 0;
  revoked = 0;
  private nextId = 1;
  /** Lease id → the simulated time it was first applied anywhere, and its TTL in seconds. */
  private readonly firstGrant = new Map<string, { at: number; ttl: number }>();
  private readonly live: string[] = [];

  constructor(
    private readonly cluster: LeaseTarget,
    private readonly rng: Rng,
  ) {}

  step(): void {
    const c = this.cluster;
    if (chance(this.rng, GRANT_RATE)) {
      const n = pick(this.rng, c.upNodes());
      const id = String(this.nextId++);
      n?.grantLease(id, TTL)?.then(
        () => {
          c.note(`client: lease ${id} granted via node ${n.id}`);
          this.live.push(id);
          void n.put(`lease-${id}`, `held by ${id}`, id)?.catch(() => undefined);
        },
        () => undefined,
      );
    }
    const l = c.leader();
    const id = pick(this.rng, this.live);
    if (l !== undefined && id !== undefined && chance(this.rng, KEEPALIVE_RATE)) {
      l.keepAlive(id)?.then((r) => c.note(`client: keep-alive of lease ${id} via leader ${l.id}: ttl ${r.ttl}`), () => undefined);
    }
  }

  observer(node: NodeId): LeaseObserver {
    return {
      granted: (id, ttl) => {
        if (this.firstGrant.has(id)) return;
        this.firstGrant.set(id, { at: this.cluster.sched.now, ttl });
        this.granted++;
      },
      revoked: (id) => this.cluster.guard(() => this.onRevoked(node, id)),
    };
  }

  private onRevoked(node: NodeId, id: string): void {
    const g = this.firstGrant.get(id);
    const now = this.cluster.sched.now;
    if (g === undefined) throw new SimViolation('lease-revoked-early', `node ${node} applied the revocation of lease ${id}, which was never granted`);
    if (now < g.at + g.ttl * 1000) {
      throw new SimViolation('lease-revoked-early', `node ${node} applied the revocation of lease ${id} at ${now} ms, ${g.at + g.ttl * 1000 - now} ms before its ${g.ttl} s TTL ran out from its grant (${g.at} ms)`);
    }
    const i = this.live.indexOf(id);
    if (i >= 0) {
      this.live.splice(i, 1);
      this.revoked++;
      this.cluster.note(`lease ${id} revoked (applied first by node ${node})`);
    }
  }
}
