// Changing the membership: member add/remove/promote/update as etcd's Cluster service does them, with
// --strict-reconfig-check, one conf change at a time through the core, and promotions decided only by the
// leader (only it knows how far a learner has got).
import type { Message, NodeId } from '../../raft/types.js';
import type { MemberInfo } from './store-api.js';
import type { MemberCore } from './member-core.js';
import type { Proposals } from './proposals.js';
import type { ClusterMember } from './membership.js';
import type { ReconfigRefusal, ReconfigView } from './reconfig-check.js';
import { RaftError } from '../../raft/errors.js';
import { NONE, decodeConfChange } from '../../raft/types.js';
import { etcdError } from '../../kv/errors.js';
import { memberIdFor, parseMemberId, parsePeerURLs, toInfo } from './membership.js';
import { encodeConfChangeContext } from './requests.js';
import { checkAdd, checkPromote, checkRemove } from './reconfig-check.js';

const MAX_LEARNERS = 1;

export class MembershipChanges {
  private published = false;

  constructor(
    private readonly c: MemberCore,
    private readonly proposals: Proposals,
  ) {}

  /** Once a leader is known: publishes this member's name and client URLs unless already done. */
  publishOnce(): void {
    if (!this.published) this.publish();
  }

  /**
   * Publishes our name and client URLs to the cluster once a leader exists, trying again until it applies
   * (etcd's publish): a proposal lost on its way to a leader not reachable yet must not leave this member
   * without client URLs in every member list.
   */
  private publish(): void {
    const c = this.c;
    this.published = true;
    const m = c.membership.members.get(c.memberId);
    if (m && m.name === c.cfg.name && sameList(m.clientURLs, c.cfg.clientURLs)) return;
    // Called from the Ready loop: a refusal to propose must reject, not throw there.
    const attempt = async (): Promise<void> => {
      await this.proposals.proposeRequest({ t: 'memberAttr', id: c.nextReqId(), memberId: String(c.memberId), name: c.cfg.name, clientURLs: [...c.cfg.clientURLs] });
    };
    attempt().catch(() => {
      this.published = false;
      setTimeout(() => {
        if (!this.published && !c.stopped && c.softState.lead !== NONE) this.publish();
      }, c.cfg.heartbeatMs);
    });
  }

  async list(): Promise<{ members: MemberInfo[] }> {
    return { members: this.c.membership.list() };
  }

  async add(requested: readonly string[], isLearner: boolean): Promise<{ member: MemberInfo; members: MemberInfo[] }> {
    const membership = this.c.membership;
    // As etcd's types.NewURLs: the URLs the id is derived from, checked, normalized and sorted.
    let peerURLs: string[];
    try {
      peerURLs = parsePeerURLs(requested);
    } catch {
      throw etcdError('MEMBER_BAD_URLS');
    }
    // As etcd: checked before the conflicts below (which etcd finds only when the change applies).
    this.strictReconfigCheck('add', (v) => checkAdd(v, isLearner));
    for (const u of peerURLs) if (membership.byPeerURL(u)) throw etcdError('PEER_URL_EXIST');
    if (isLearner && membership.learners().length >= MAX_LEARNERS) throw etcdError('TOO_MANY_LEARNERS');
    // As etcd's MemberAdd: no cluster token, and the time in seconds.
    const id = memberIdFor(peerURLs, '', Math.floor(Date.now() / 1000));
    if (membership.members.has(id) || membership.removed.has(id)) throw etcdError('MEMBER_EXIST');
    const member: ClusterMember = { id, name: '', peerURLs, clientURLs: [], isLearner };
    const r = await this.proposeConfChange<{ member: ClusterMember; members: MemberInfo[] }>(isLearner ? 'addLearner' : 'addNode', id, member);
    return { member: toInfo(r.member), members: r.members };
  }

  async remove(id: string): Promise<{ members: MemberInfo[] }> {
    const n = parseMemberId(id) ?? NONE;
    this.strictReconfigCheck('remove', (v) => checkRemove(v, n));
    const m = this.c.membership.members.get(n);
    if (!m) throw etcdError('MEMBER_NOT_FOUND');
    return this.proposeConfChange<{ members: MemberInfo[] }>('removeNode', n, m);
  }

  async promote(id: string): Promise<{ members: MemberInfo[] }> {
    const n = parseMemberId(id) ?? NONE;
    if (this.c.isLeader()) return this.promoteAsLeader(n);
    this.promotableLearner(n);
    // Only the leader knows how far the learner has got: as etcd, a follower hands it the whole request.
    const lead = this.c.softState.lead;
    if (lead === NONE) throw etcdError('NO_LEADER');
    return this.c.transport.memberPromote(lead, n);
  }

  async update(id: string, peerURLs: readonly string[]): Promise<{ members: MemberInfo[] }> {
    const n = parseMemberId(id);
    if (n === undefined || !this.c.membership.members.has(n)) throw etcdError('MEMBER_NOT_FOUND');
    for (const u of peerURLs) if (!isUrl(u)) throw etcdError('MEMBER_BAD_URLS');
    return this.proposals.proposeRequest<{ members: MemberInfo[] }>({ t: 'memberUpdate', id: this.c.nextReqId(), memberId: id, peerURLs: [...peerURLs] });
  }

  /**
   * --strict-reconfig-check, on the member asked (for a promotion, the leader): throws the refusal `check`
   * finds in the membership as this member sees it and in how long its links to peers have been up.
   */
  private strictReconfigCheck(change: 'add' | 'remove' | 'promote', check: (v: ReconfigView) => ReconfigRefusal | undefined): void {
    if (this.c.cfg.strictReconfigCheck === false) return;
    const refusal = check({
      self: this.c.memberId,
      members: this.c.membership.members.values(),
      activeSince: (id) => this.c.transport.activeSince(id),
      now: performance.now(),
    });
    if (refusal === undefined) return;
    this.c.log.warn({ change, refusal }, 'membership change refused by the strict reconfiguration check');
    throw etcdError(refusal);
  }

  /** The learner `id`, or the error etcd gives for promoting something else. */
  private promotableLearner(id: NodeId): ClusterMember {
    const m = this.c.membership.members.get(id);
    if (!m) throw etcdError('MEMBER_NOT_FOUND');
    if (!m.isLearner) throw etcdError('MEMBER_NOT_LEARNER');
    return m;
  }

  /** Leader only (asked by a client or by a follower that forwarded the request). */
  promoteAsLeader(id: NodeId): Promise<{ members: MemberInfo[] }> {
    const m = this.promotableLearner(id);
    if (!this.learnerInSync(id)) throw etcdError('LEARNER_NOT_READY');
    this.strictReconfigCheck('promote', checkPromote);
    return this.proposeConfChange<{ members: MemberInfo[] }>('addNode', id, m);
  }

  /** Leader only: etcd promotes only a learner whose log is within 10% of the leader's. */
  private learnerInSync(id: NodeId): boolean {
    const st = this.c.node.status();
    const pr = st.progress.get(id);
    const leaderMatch = st.progress.get(this.c.memberId)?.match ?? st.lastIndex;
    return pr !== undefined && pr.match >= leaderMatch * 0.9;
  }

  /**
   * Leader only: drops from a follower's proposals the promotion of a learner that is not in sync. Only
   * the leader knows how far a learner has got, and a voter that holds nothing would count towards the
   * quorum. Followers forward promotion requests (promote) instead of proposing them; this guards
   * against the races left: a member that checked as leader and lost leadership before its proposal went
   * out hands that proposal, unchecked, to the new leader.
   */
  withoutEarlyPromotions(m: Message): Message | undefined {
    const kept = m.entries.filter((e) => {
      if (e.type !== 'confChange') return true;
      const cc = decodeConfChange(e.data);
      return !(cc.type === 'addNode' && this.c.membership.members.get(cc.nodeId)?.isLearner === true && !this.learnerInSync(cc.nodeId));
    });
    if (kept.length === m.entries.length) return m;
    this.c.log.warn({ from: m.from.toString(16) }, 'dropped a forwarded promotion of a learner that is not in sync with the leader');
    return kept.length > 0 ? { ...m, entries: kept } : undefined;
  }

  private proposeConfChange<T>(type: 'addNode' | 'addLearner' | 'removeNode', nodeId: NodeId, member: ClusterMember): Promise<T> {
    this.proposals.checkAcceptingWrites();
    const reqId = this.c.nextReqId();
    const context = encodeConfChangeContext({ reqId, member });
    return this.proposals.waitFor<T>(reqId, 'confChange', () => {
      if (this.c.softState.lead === NONE) throw etcdError('NO_LEADER');
      try {
        this.c.node.proposeConfChange({ type, nodeId, context });
      } catch (e) {
        // One membership change at a time: the core refuses a second while one is pending.
        if (e instanceof RaftError && e.code === 'RAFT_PROPOSAL_DROPPED') throw etcdError('UNHEALTHY');
        throw e;
      }
      this.c.kick();
    });
  }
}

function isUrl(u: string): boolean {
  try {
    const p = new URL(u);
    return p.protocol === 'http:' || p.protocol === 'https:' || p.protocol === 'unix:' || p.protocol === 'unixs:';
  } catch {
    return false;
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
