// etcd 3.4's --strict-reconfig-check (on by default): what the member asked for a membership change
// checks before proposing it, so that the change cannot leave the cluster short of a quorum of members
// that are up. Two questions, asked of the cluster as this member sees it:
//  - "started": has a member published its name? (Members of --initial-cluster have one from the start;
//    an added member gets one once it has joined and published.) A change that would leave fewer started
//    voters than a quorum is refused with MEMBER_NOT_ENOUGH_STARTED.
//  - "connected": has this member's link to a peer been up for HEALTH_INTERVAL_MS without a break? An add
//    is refused with UNHEALTHY unless every voter is; a removal unless enough of the rest are.
// Pure: the member hands in its membership, when each link came up, and the time.
import type { EtcdErrorCode } from '../../kv/errors.js';
import type { NodeId } from '../../raft/types.js';

/** How long a link must have been up for the peer to count as connected (etcd's HealthInterval). */
export const HEALTH_INTERVAL_MS = 5000;

export interface ReconfigMember {
  readonly id: NodeId;
  /** Empty until the member has published it: such a member has not started. */
  readonly name: string;
  readonly isLearner: boolean;
}

export interface ReconfigView {
  readonly self: NodeId;
  readonly members: Iterable<ReconfigMember>;
  /** When this member's link to the peer last came up (on the clock of `now`), undefined while it is down. */
  activeSince(id: NodeId): number | undefined;
  readonly now: number;
}

export type ReconfigRefusal = Extract<EtcdErrorCode, 'MEMBER_NOT_ENOUGH_STARTED' | 'UNHEALTHY'>;

const quorum = (n: number): number => Math.floor(n / 2) + 1;
const started = (m: ReconfigMember): boolean => m.name !== '';

function votersOf(v: ReconfigView): ReconfigMember[] {
  return [...v.members].filter((m) => !m.isLearner);
}

/** This member itself, or a peer whose link has been up for the whole health interval. */
function connected(v: ReconfigView, id: NodeId): boolean {
  if (id === v.self) return true;
  const since = v.activeSince(id);
  return since !== undefined && v.now - since > HEALTH_INTERVAL_MS;
}

/** Adding a member (a voter, or a learner, which is not counted among the voters). */
export function checkAdd(v: ReconfigView, isLearner: boolean): ReconfigRefusal | undefined {
  const voters = votersOf(v);
  if (!isLearner) {
    // The new voter counts as a member that has not started. One started of two is let through: that
    // is how a cluster restored onto one member grows again.
    const members = voters.length + 1;
    const up = voters.filter(started).length;
    if (!(up === 1 && members === 2) && up < quorum(members)) return 'MEMBER_NOT_ENOUGH_STARTED';
  }
  if (!voters.every((m) => connected(v, m.id))) return 'UNHEALTHY';
  return undefined;
}

/** Removing member `id` (unknown ids are checked as a voter that is down: the apply then refuses them). */
export function checkRemove(v: ReconfigView, id: NodeId): ReconfigRefusal | undefined {
  const all = [...v.members];
  if (all.find((m) => m.id === id)?.isLearner === true) return undefined;
  const voters = all.filter((m) => !m.isLearner);
  const rest = voters.filter((m) => m.id !== id);
  if (rest.filter(started).length < quorum(rest.length)) return 'MEMBER_NOT_ENOUGH_STARTED';
  // A member this one has no link to is not part of the quorum that is up: taking it out costs nothing.
  if (id !== v.self && v.activeSince(id) === undefined) return undefined;
  // The member removed is taken off the connected ones whether or not it was counted among them.
  const connectedVoters = voters.filter((m) => connected(v, m.id)).length;
  if (connectedVoters - 1 < quorum(voters.length - 1)) return 'UNHEALTHY';
  return undefined;
}

/** Promoting a learner, which then counts as a started voter. */
export function checkPromote(v: ReconfigView): ReconfigRefusal | undefined {
  const voters = votersOf(v);
  if (voters.filter(started).length + 1 < quorum(voters.length + 1)) return 'MEMBER_NOT_ENOUGH_STARTED';
  return undefined;
}
