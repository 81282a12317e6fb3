// Which key permissions a KV request needs, as etcd 3.4's auth applier asks them (apply_auth.go): a range
// reads its keys; a put writes its key (and reads it for prev_kv); a delete writes its range (and reads
// it for prev_kv); a txn needs read on every compare and what each op of both branches needs, nested
// txns included. A put that attaches a lease, and revoking a lease, need write on the lease's keys.
import type { Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest } from '../../kv/types.js';
import type { AuthInfo, AuthState } from './auth-state.js';

const NONE = new Uint8Array(0);

/** The keys attached to a lease (latin1 strings, as the lessor keeps them); none for an unknown lease. */
export type LeaseKeys = (lease: string) => readonly Uint8Array[];

export class RequestPerms {
  constructor(
    private readonly state: AuthState,
    private readonly leaseKeys: LeaseKeys,
  ) {}

  range(ai: AuthInfo | undefined, r: RangeRequest): void {
    this.state.checkOp(ai, 'READ', r.key, r.rangeEnd ?? NONE);
  }

  put(ai: AuthInfo | undefined, r: PutRequest): void {
    this.state.checkOp(ai, 'WRITE', r.key, NONE);
    if (r.prevKv) this.state.checkOp(ai, 'READ', r.key, NONE);
    if (r.lease !== undefined && r.lease !== '0' && r.lease !== '') this.leasePuts(ai, r.lease);
  }

  deleteRange(ai: AuthInfo | undefined, r: DeleteRangeRequest): void {
    this.state.checkOp(ai, 'WRITE', r.key, r.rangeEnd ?? NONE);
    if (r.prevKv) this.state.checkOp(ai, 'READ', r.key, r.rangeEnd ?? NONE);
  }

  txn(ai: AuthInfo | undefined, r: TxnRequest): void {
    for (const c of r.compare ?? []) this.compare(ai, c);
    for (const op of [...(r.success ?? []), ...(r.failure ?? [])]) this.op(ai, op);
  }

  /** Revoking a lease, or attaching one, writes every key it holds. */
  leasePuts(ai: AuthInfo | undefined, lease: string): void {
    for (const k of this.leaseKeys(lease)) this.state.checkOp(ai, 'WRITE', k, NONE);
  }

  private compare(ai: AuthInfo | undefined, c: Compare): void {
    this.state.checkOp(ai, 'READ', c.key, c.rangeEnd ?? NONE);
  }

  private op(ai: AuthInfo | undefined, op: RequestOp): void {
    if ('requestRange' in op) this.range(ai, op.requestRange);
    else if ('requestPut' in op) this.put(ai, op.requestPut);
    else if ('requestDeleteRange' in op) this.deleteRange(ai, op.requestDeleteRange);
    else this.txn(ai, op.requestTxn);
  }
}
