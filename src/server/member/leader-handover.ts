// Leadership changing hands: moving it on request (etcdctl move-leader, and a leader that stops hands it to
// a caught-up voter first), and a follower that lost its stream to the leader campaigning early.
import type { NodeId } from '../../raft/types.js';
import type { MemberCore } from './member-core.js';
import { NONE } from '../../raft/types.js';
import { etcdError } from '../../kv/errors.js';
import { parseMemberId } from './membership.js';

export class LeaderHandover {
  constructor(private readonly c: MemberCore) {}

  /** Hands leadership to the member; `giveUp` (asked every heartbeat) ends the wait early, without error. */
  async moveLeader(targetId: string, timeoutMs = this.c.requestTimeoutMs, giveUp?: () => boolean): Promise<void> {
    const c = this.c;
    if (!c.isLeader()) throw etcdError('NOT_LEADER');
    const target = parseMemberId(targetId) ?? NONE;
    const m = c.membership.members.get(target);
    if (!m || m.isLearner) throw etcdError('BAD_LEADER_TRANSFEREE');
    if (target === c.memberId) return;
    c.node.transferLeader(target);
    c.kick();
    const deadline = Date.now() + timeoutMs;
    while (c.softState.lead !== target) {
      if (giveUp?.()) return;
      if (Date.now() > deadline) throw etcdError('TIMEOUT');
      await new Promise((r) => setTimeout(r, c.cfg.heartbeatMs));
    }
  }

  /** A stopping leader's hand-over to its most caught-up voter. */
  async beforeStop(): Promise<void> {
    const c = this.c;
    const st = c.node.status();
    let best: NodeId = NONE;
    let bestMatch = -1;
    for (const [id, pr] of st.progress) {
      if (id === c.memberId || pr.isLearner) continue;
      if (pr.match > bestMatch) {
        best = id;
        bestMatch = pr.match;
      }
    }
    if (best === NONE || !c.transport.isActive(best)) return;
    // Bounded: if the transferee cannot take over soon, stop anyway. It is given up at once when the
    // transferee's connection drops: every member stopping together (Ctrl-C on `setpoint up`) then takes a
    // moment, not two election timeouts.
    await this.moveLeader(String(best), 2 * c.cfg.electionMs, () => !c.transport.isActive(best));
    if (c.softState.lead !== best) c.log.info({ transferee: best.toString(16) }, 'stopping without a hand-over: the transferee went away');
  }

  /**
   * Our stream to `id` broke. When `id` is our leader, its process has most likely died (its kernel reset
   * the connection), so instead of waiting out an election timeout this follower ends the leader's lease
   * and campaigns after a short pause (campaignPause). The campaign starts with a pre-vote, which members
   * still hearing from a live leader refuse, so a connection that broke under a healthy leader disturbs
   * nothing. A leader lost to a dead host or a partition, where no reset arrives, is still found by the
   * election timeout.
   */
  onConnectionLost(id: NodeId): void {
    const c = this.c;
    if (c.stopped || !c.node.leaderConnectionLost(id)) return;
    const pause = this.campaignPause(id);
    c.log.warn({ leader: id.toString(16), pauseMs: Math.round(pause) }, 'connection to the leader lost; campaigning unless it comes back');
    // A pre-vote sent before the other survivor noticed the loss is ignored (its lease still held), and
    // that survivor's own pre-vote is refused if our log is longer: both then sit as pre-candidates until
    // the election timeout, which may be long. So a campaign that has not won is tried again, a full
    // round of turns later, until a leader appears or an election timeout has passed.
    const retryMs = (c.membership.voters().length * 2 + 1) * c.cfg.heartbeatMs;
    const deadline = performance.now() + c.cfg.electionMs;
    const attempt = (first: boolean): void => {
      if (c.stopped) return;
      if (first ? !c.node.leaseEnded() : !c.node.campaigning()) return;
      c.node.campaign();
      c.kick();
      if (performance.now() + retryMs < deadline) setTimeout(() => attempt(false), retryMs + Math.random() * c.cfg.heartbeatMs).unref();
    };
    setTimeout(() => attempt(true), pause).unref();
  }

  /**
   * The surviving voters take turns by member id, two heartbeats apart, each turn jittered by up to half a
   * heartbeat: the first campaigns almost at once and usually wins uncontested, and the turns never
   * overlap, so two survivors do not split the vote (a uniform pause of up to two heartbeats did that now
   * and then, and cost 70 ms on average before anyone campaigned). A survivor that is down or slow to
   * notice holds the next one up by no more than its turn; one whose pre-vote came too early, before the
   * other noticed the loss, is granted that one's pre-vote in turn, its own lease being over.
   */
  private campaignPause(lost: NodeId): number {
    const c = this.c;
    const rank = c.membership.voters().filter((v) => v !== lost && v < c.memberId).length;
    return (rank * 2 + Math.random() / 2) * c.cfg.heartbeatMs;
  }
}
