// The KV requests a member serves: writes checked (the one place a write is validated), held to the quota
// and proposed; reads linearized through ReadIndex unless serializable; compactions proposed.
import type { DeleteRangeRequest, DeleteRangeResponse, PutRequest, PutResponse, RangeRequest, RangeResponse, TxnRequest, TxnResponse } from '../../kv/types.js';
import type { MemberCore } from './member-core.js';
import type { WriteOptions } from './store-api.js';
import type { Proposals } from './proposals.js';
import type { ReadBarrier } from './read-barrier.js';
import type { AuthRequests } from './auth-requests.js';
import type { AuthInfo } from '../auth/auth-state.js';
import { etcdError } from '../../kv/errors.js';
import { checkPut, checkRange, checkTxn, putCost } from '../../kv/txn-check.js';

export class KvRequests {
  constructor(
    private readonly c: MemberCore,
    private readonly proposals: Proposals,
    private readonly reads: () => ReadBarrier,
    /** Raises the NOSPACE alarm (through Raft) when a write is refused for the quota. */
    private readonly raiseNoSpace: () => void,
    /** Checks reads, and gives writes their caller, while auth is enabled. */
    private readonly auth: () => AuthRequests,
  ) {}

  async linearize(serializable: boolean): Promise<void> {
    if (this.c.stopped) throw etcdError('STOPPED');
    if (serializable || this.c.cfg.unsafeLocalReads) return;
    if (this.c.node.isLearner()) throw etcdError('NOT_SUPPORTED_FOR_LEARNER');
    await this.reads().wait();
  }

  async range(req: RangeRequest, ai?: AuthInfo): Promise<RangeResponse> {
    checkRange(req);
    await this.linearize(req.serializable === true);
    return this.auth().read(ai, (p, who) => p.range(who, req), async () => this.c.kv.range(req));
  }

  /** Refuses a write that would take the store past its quota, raising the NOSPACE alarm (etcd). */
  checkQuota(cost: number): void {
    const kv = this.c.kv;
    if (kv.noSpaceAlarm) throw etcdError('NO_SPACE');
    if (cost > 0 && kv.size() + cost > this.c.cfg.quotaBackendBytes) {
      this.raiseNoSpace();
      throw etcdError('NO_SPACE');
    }
  }

  async put(req: PutRequest, opts?: WriteOptions): Promise<PutResponse> {
    checkWrite('put', req, opts);
    this.checkQuota(putCost(req));
    return this.proposals.proposeRequest<PutResponse>(this.auth().asCaller({ t: 'put', id: this.c.nextReqId(), req }, opts?.auth));
  }

  async deleteRange(req: DeleteRangeRequest, opts?: WriteOptions): Promise<DeleteRangeResponse> {
    checkWrite('deleteRange', req, opts);
    return this.proposals.proposeRequest<DeleteRangeResponse>(this.auth().asCaller({ t: 'deleteRange', id: this.c.nextReqId(), req }, opts?.auth));
  }

  async txn(req: TxnRequest, opts?: WriteOptions): Promise<TxnResponse> {
    checkWrite('txn', req, opts);
    if (isReadOnly(req)) {
      // A read-only txn is served like a range: linearizable through ReadIndex, no log entry.
      await this.linearize(false);
      return this.auth().read(opts?.auth, (p, who) => p.txn(who, req), async () => this.c.kv.txn(req));
    }
    this.checkQuota(putBytes(req));
    return this.proposals.proposeRequest<TxnResponse>(this.auth().asCaller({ t: 'txn', id: this.c.nextReqId(), req }, opts?.auth));
  }

  async compact(revision: number, physical: boolean): Promise<{ revision: number }> {
    const r = await this.proposals.proposeRequest<{ revision: number; done: Promise<void> }>({ t: 'compact', id: this.c.nextReqId(), revision });
    if (physical) await r.done;
    return { revision: r.revision };
  }
}

type WriteRequest = { put: PutRequest; deleteRange: DeleteRangeRequest; txn: TxnRequest };

/**
 * The one place a write is checked before it is proposed: etcd's v3rpc checks (empty key, too many ops, …),
 * then the size the client edge measured (so an oversized request that is also invalid gets the check's
 * error, as in etcd). The key-value store checks again as it applies, for the log's sake.
 */
export function checkWrite<K extends keyof WriteRequest>(kind: K, req: WriteRequest[K], opts?: WriteOptions): void {
  if (kind === 'put') checkPut(req as PutRequest);
  else if (kind === 'deleteRange') checkRange(req as DeleteRangeRequest);
  else checkTxn(req as TxnRequest);
  if (opts?.tooLarge) throw etcdError('REQUEST_TOO_LARGE');
}

function isReadOnly(req: TxnRequest): boolean {
  const ops = [...(req.success ?? []), ...(req.failure ?? [])];
  return ops.every((op) => 'requestRange' in op || ('requestTxn' in op && isReadOnly(op.requestTxn)));
}

function putBytes(req: TxnRequest): number {
  let n = 0;
  for (const op of [...(req.success ?? []), ...(req.failure ?? [])]) {
    if ('requestPut' in op) n += putCost(op.requestPut);
    else if ('requestTxn' in op) n += putBytes(op.requestTxn);
  }
  return n;
}
