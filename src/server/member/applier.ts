// Applying committed entries: requests to the key-value store (puts and txns in place on the hot path),
// membership changes to the core and the membership, each result handed to the proposal's waiter.
import type { Entry, NodeId } from '../../raft/types.js';
import type { AsUser, InternalRequest } from './requests.js';
import type { MemberInfo } from './store-api.js';
import type { MemberCore } from './member-core.js';
import type { Proposals } from './proposals.js';
import type { KvStore } from '../../kv/kv-store.js';
import type { RequestOp, TxnRequest } from '../../kv/types.js';
import { decodeConfChange } from '../../raft/types.js';
import { EtcdError, etcdError } from '../../kv/errors.js';
import { decodeConfChangeContext, decodeRequest } from './requests.js';
import { parseMemberId } from './membership.js';
import { alarmList } from './maintenance.js';

type MemberRequest = Extract<InternalRequest, { t: 'memberAttr' | 'memberUpdate' }>;

function isMemberRequest(r: InternalRequest): r is MemberRequest {
  return r.t === 'memberAttr' || r.t === 'memberUpdate';
}

/** `req` with no delete asking for prev_kv (nested txns included): only the response differs. */
function withoutDeletePrevKvs(req: TxnRequest): TxnRequest {
  const strip = (ops: readonly RequestOp[] | undefined): RequestOp[] | undefined =>
    ops?.map((op) => {
      if ('requestDeleteRange' in op && op.requestDeleteRange.prevKv) return { requestDeleteRange: { ...op.requestDeleteRange, prevKv: false } };
      if ('requestTxn' in op) return { requestTxn: withoutDeletePrevKvs(op.requestTxn) };
      return op;
    });
  const success = strip(req.success);
  const failure = strip(req.failure);
  return { ...req, ...(success ? { success } : {}), ...(failure ? { failure } : {}) };
}

export interface ApplierHooks {
  /** The entry removing this member applied: it stops. */
  leaveCluster(why: string): void;
  /** A member joined: take a snapshot whose configuration includes it, so it can catch up from it. */
  snapshotSoon(): void;
  /** A revocation applied: the lease's expiry may be proposed again should it come back. */
  leaseRevoked(lease: string): void;
  /** The member's auth store (member/auth-requests.ts); the simulation runs without one. */
  readonly auth?: AuthApplier;
}

/** Applying auth entries, and the permission check of a write proposed with its caller. */
export interface AuthApplier {
  apply(r: Extract<InternalRequest, { t: 'auth' | 'authenticate' }>, index: number): unknown;
  check(r: AsUser): void;
}

/** What applying needs of the key-value store: a member's KvStore, or the simulation's in-memory one. */
export type ApplyStore = Pick<
  KvStore,
  'consistentIndex' | 'currentRev' | 'markApplied' | 'canPutNow' | 'putNow' | 'canTxnNow' | 'txnNow' | 'put' | 'deleteRange' | 'txn' | 'compact' | 'leaseGrant' | 'leaseRevoke' | 'alarms' | 'setAlarms'
>;

export class Applier {
  constructor(
    private readonly c: MemberCore<ApplyStore>,
    private readonly proposals: Proposals,
    private readonly hooks: ApplierHooks,
  ) {}

  /** Applies one committed entry; a promise only when it has to wait, which a put or txn (the hot path) never does while no write is queued ahead of it. */
  applyEntry(e: Entry): Promise<void> | undefined {
    const kv = this.c.kv;
    if (e.type === 'confChange') {
      this.applyConfChange(e);
      return undefined;
    }
    if (e.data.length === 0) {
      // The leader's no-op.
      if (e.index > kv.consistentIndex) kv.markApplied(e.index);
      return undefined;
    }
    const r = decodeRequest(e.data);
    // Replayed after a restart: the key-value store already holds it. The membership does not (it is
    // rebuilt from the last snapshot and the log), so a change to members' attributes applies again.
    const already = e.index <= kv.consistentIndex;
    if (already) return this.applyWaiting(e, r, true);
    let result: unknown;
    try {
      // Puts and txns (every write the control plane makes) apply in place when nothing is queued ahead.
      if (r.t === 'put' && kv.canPutNow()) result = kv.putNow(r.req, e.index);
      else if (r.t === 'txn' && kv.canTxnNow(r.req)) result = kv.txnNow(r.req, e.index);
      else return this.applyWaiting(e, r, false);
    } catch (err) {
      this.applyFailed(e, r, false, err);
      return undefined;
    }
    this.proposals.settle(r.id, undefined, result);
    return undefined;
  }

  private async applyWaiting(e: Entry, r: InternalRequest, already: boolean): Promise<void> {
    try {
      const result = already ? (isMemberRequest(r) ? this.applyMemberRequest(r) : undefined) : await this.applyRequest(r, e.index, this.proposals.isWaiting(r.id));
      this.proposals.settle(r.id, undefined, result);
    } catch (err) {
      this.applyFailed(e, r, already, err);
    }
  }

  /** A request that failed to apply still moves the consistent index; anything but an etcd error is a bug. */
  private applyFailed(e: Entry, r: InternalRequest, already: boolean, err: unknown): void {
    if (!already && e.index > this.c.kv.consistentIndex) this.c.kv.markApplied(e.index);
    if (!(err instanceof EtcdError)) throw err; // a bug: stop rather than diverge
    this.proposals.settle(r.id, err, undefined);
  }

  /**
   * `answered`: whether a client here waits for the result. Where none does, a delete's prevKvs are not
   * gathered: on the other members, a delete of half a million keys with prev_kv copied every old value
   * into a response that nobody would read, all of it alive until the delete ended.
   */
  private async applyRequest(r: InternalRequest, index: number, answered: boolean): Promise<unknown> {
    const kv = this.c.kv;
    switch (r.t) {
      case 'put':
        return kv.put(r.req, index);
      case 'deleteRange':
        return kv.deleteRange(answered || !r.req.prevKv ? r.req : { ...r.req, prevKv: false }, index);
      case 'txn':
        return kv.txn(answered ? r.req : withoutDeletePrevKvs(r.req), index);
      case 'compact': {
        const { done } = kv.compact(r.revision, index);
        return { revision: kv.currentRev, done };
      }
      case 'leaseGrant':
        return kv.leaseGrant(r.lease, r.ttl, index);
      case 'leaseRevoke':
        this.hooks.leaseRevoked(r.lease);
        return { revision: kv.leaseRevoke(r.lease, index) };
      case 'alarm': {
        // Alarms are replicated state kept by the key-value store (NOSPACE refuses writes as they apply),
        // so they survive restarts and travel with snapshots, as in etcd's backend.
        const same = (a: { memberId: string; alarm: string }): boolean => a.memberId === r.memberId && a.alarm === r.alarm;
        const now = kv.alarms;
        if (r.action === 'ACTIVATE') kv.setAlarms(now.some(same) ? now : [...now, { memberId: r.memberId, alarm: r.alarm }]);
        else kv.setAlarms(now.filter((a) => !same(a)));
        kv.markApplied(index);
        return { alarms: alarmList(kv) };
      }
      case 'memberAttr':
      case 'memberUpdate': {
        const result = this.applyMemberRequest(r);
        kv.markApplied(index);
        return result;
      }
      case 'auth':
      case 'authenticate': {
        if (!this.hooks.auth) throw new Error(`an ${r.t} entry on a member without an auth store`);
        const result = this.hooks.auth.apply(r, index);
        kv.markApplied(index);
        return result;
      }
      case 'asUser':
        this.hooks.auth?.check(r);
        return this.applyRequest(r.req, index, answered);
    }
  }

  private applyMemberRequest(r: MemberRequest): { members: MemberInfo[] } | undefined {
    const membership = this.c.membership;
    if (r.t === 'memberAttr') {
      const id = parseMemberId(r.memberId);
      const m = id === undefined ? undefined : membership.members.get(id);
      if (m) {
        m.name = r.name;
        m.clientURLs = [...r.clientURLs];
      }
      return undefined;
    }
    const id = parseMemberId(r.memberId);
    const m = id === undefined ? undefined : membership.members.get(id);
    if (id === undefined || !m) throw etcdError('MEMBER_NOT_FOUND');
    m.peerURLs = [...r.peerURLs];
    if (id !== this.c.memberId) this.c.transport.updatePeer(id, m.peerURLs);
    return { members: membership.list() };
  }

  private applyConfChange(e: Entry): void {
    const cc = decodeConfChange(e.data);
    const ctx = cc.context ? decodeConfChangeContext(cc.context) : undefined;
    this.c.node.applyConfChange(cc);
    const membership = this.c.membership;
    const id: NodeId = cc.nodeId;
    switch (cc.type) {
      case 'addNode':
      case 'addLearner': {
        const existing = membership.members.get(id);
        if (existing) existing.isLearner = cc.type === 'addLearner';
        else if (ctx) membership.members.set(id, { ...ctx.member, id, isLearner: cc.type === 'addLearner' });
        if (id !== this.c.memberId && ctx) this.c.transport.addPeer(id, ctx.member.peerURLs);
        break;
      }
      case 'removeNode':
        membership.members.delete(id);
        membership.removed.add(id);
        if (id !== this.c.memberId) this.c.transport.removePeer(id);
        else this.hooks.leaveCluster('this member was removed from the cluster');
        break;
    }
    if (e.index > this.c.kv.consistentIndex) this.c.kv.markApplied(e.index);
    if (cc.type !== 'removeNode') this.hooks.snapshotSoon();
    if (ctx) this.proposals.settle(ctx.reqId, undefined, { members: membership.list(), member: membership.members.get(id) });
  }
}
