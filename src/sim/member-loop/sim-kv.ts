// The simulation's key-value state under the member's real Applier and Leases (behind their ApplyStore
// and LeaseStore seams): puts, and leases on the store's own Lessor running on simulated time. Each cell
// remembers the log index that wrote it, which is what the read checker compares; the revision a put
// answers with is its log index, so an acknowledged write tells the client where it is.
// Like SimNode's state machine, each apply is durable on its own (a store that writes its applied index
// with its data), so it survives a crash while the Raft log's unsynced tail does not.
import type { KvStore } from '../../kv/kv-store.js';
import type { PutRequest, PutResponse } from '../../kv/types.js';
import type { ApplyStore } from '../../server/member/applier.js';
import type { LeaseStore } from '../../server/member/leases.js';
import { LeaseClocks } from '../../kv/lease-clocks.js';
import type { KvCell } from '../kv-machine.js';
import { Lessor } from '../../kv/lessor.js';
import { etcdError } from '../../kv/errors.js';
import { cellsDigest } from '../kv-machine.js';
import { HASH_SEED, hashString } from '../hash.js';

/** Told of every grant and revocation as a member applies it (the lease checks). */
export interface LeaseObserver {
  granted(id: string, ttl: number): void;
  revoked(id: string): void;
}

const decoder = new TextDecoder();

function unsupported(what: string): never {
  throw new Error(`sim: ${what} is not modelled by the member-loop simulation (its workload only puts and reads)`);
}

export class SimKv extends LeaseClocks implements ApplyStore, LeaseStore {
  /** The bootstrap snapshot (index 1) is applied everywhere. */
  consistentIndex = 1;
  currentRev = 1;
  alarms: KvStore['alarms'] = [];
  /** Chained over every applied entry, for the safety checker's state-machine comparison. */
  applyHash = HASH_SEED;
  private readonly cells = new Map<string, KvCell>();
  /** The member's real lessor, on simulated time: only the leader runs its clocks. */
  protected readonly lessor: Lessor;
  private readonly leaseOf = new Map<string, string>();

  constructor(
    now: () => number,
    minLeaseTtl: number,
    private readonly observer: LeaseObserver,
  ) {
    super();
    this.lessor = new Lessor(minLeaseTtl, now);
  }

  get(key: string): KvCell | undefined {
    return this.cells.get(key);
  }

  markApplied(index: number): void {
    this.consistentIndex = index;
  }

  setAlarms(alarms: KvStore['alarms']): void {
    this.alarms = alarms;
  }

  canPutNow(): boolean {
    return true;
  }

  putNow(req: PutRequest, index?: number): PutResponse {
    if (index === undefined) return unsupported('a put outside the log');
    const key = decoder.decode(req.key);
    const lease = req.lease ?? '0';
    if (lease !== '0' && this.lessor.lookup(lease) === undefined) throw etcdError('LEASE_NOT_FOUND');
    const before = this.leaseOf.get(key);
    if (before !== undefined) this.lessor.detach(before, key);
    if (lease !== '0') {
      this.lessor.attach(lease, key);
      this.leaseOf.set(key, lease);
    } else this.leaseOf.delete(key);
    this.cells.set(decoder.decode(req.key), { value: decoder.decode(req.value ?? new Uint8Array(0)), index });
    this.consistentIndex = index;
    this.currentRev = index;
    return { header: { revision: index } };
  }

  put(req: PutRequest, index?: number): Promise<PutResponse> {
    return Promise.resolve(this.putNow(req, index));
  }

  canTxnNow(): boolean {
    return false;
  }

  txnNow(): never {
    return unsupported('txn');
  }

  txn(): never {
    return unsupported('txn');
  }

  deleteRange(): never {
    return unsupported('deleteRange');
  }

  compact(): never {
    return unsupported('compact');
  }

  leaseGrant(id: string, ttl: number, index?: number): { id: string; ttl: number } {
    const l = this.lessor.grant(id, ttl);
    if (index !== undefined) this.markApplied(index);
    this.observer.granted(id, l.ttl);
    return { id, ttl: l.ttl };
  }

  /** The lease's keys go with it, in the revocation's revision (its log index). */
  leaseRevoke(id: string, index?: number): number {
    for (const k of this.lessor.revoke(id)) {
      this.cells.delete(k);
      this.leaseOf.delete(k);
    }
    if (index !== undefined) {
      this.consistentIndex = index;
      this.currentRev = index;
    }
    this.observer.revoked(id);
    return this.currentRev;
  }

  /** A digest of the contents, to compare replicas once converged. */
  digest(): number {
    return hashString(this.lessor.list().sort().join(','), cellsDigest(this.cells));
  }
}
