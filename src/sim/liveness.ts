// The recovery phase: once every fault has stopped, a leader must emerge and commit a fresh proposal,
// and then every member must catch up to the same state, each within a bound of simulated ticks.
import type { NodeId } from '../raft/types.js';
import type { SimCluster } from './cluster.js';
import { SimViolation } from './violation.js';

/**
 * Ticks until a proposal made after the heal is acknowledged; clients are quiet meanwhile, so this
 * measures elections plus replicating whatever backlog the fault phase left. Throws past `bound`.
 */
export function awaitRecovery(cluster: SimCluster, bound: number): number {
  const start = cluster.now;
  const electionTick = cluster.cfg.raft.electionTick;
  const probes: number[] = [];
  let lastLeader: NodeId | undefined;
  let lastProbe = -Infinity;
  for (;;) {
    if (probes.some((id) => !cluster.clients.isPending(id))) return cluster.now - start;
    if (cluster.now - start >= bound) {
      throw new SimViolation('liveness', `no fresh proposal committed within ${bound} ticks after the faults stopped (${describeNodes(cluster)})`);
    }
    const l = cluster.leader();
    // Re-propose through each new leader, and now and then in case the proposal was lost on the way.
    if (l !== undefined && (l.id !== lastLeader || cluster.now - lastProbe >= electionTick)) {
      const w = cluster.propose(l.id, 'probe');
      if (w !== undefined) probes.push(w.id);
      lastLeader = l.id;
      lastProbe = cluster.now;
    }
    cluster.step();
  }
}

/** With traffic stopped, ticks until every member applied the leader's whole log; then their states must agree. */
export function awaitConvergence(cluster: SimCluster, bound: number): number {
  const start = cluster.now;
  for (;;) {
    const l = cluster.leader();
    if (l !== undefined) {
      const commit = l.storage.getHardState().commit;
      const members = cluster.members();
      if (commit === l.storage.lastIndex() && members.every((n) => n.status === 'up' && n.applied === commit)) {
        const digest = l.kv.digest();
        const odd = members.find((n) => n.kv.digest() !== digest);
        if (odd !== undefined) {
          throw new SimViolation('convergence', `node ${odd.id} and leader ${l.id} both applied up to ${commit} but hold different key-value states`);
        }
        return cluster.now - start;
      }
    }
    if (cluster.now - start >= bound) {
      throw new SimViolation('convergence', `members did not all apply the leader's log within ${bound} ticks of quiet (${describeNodes(cluster)})`);
    }
    cluster.step();
  }
}

function describeNodes(cluster: SimCluster): string {
  return cluster
    .members()
    .map((n) => {
      const hs = n.storage.getHardState();
      return `node ${n.id} ${n.status} ${n.raftState} term=${hs.term} commit=${hs.commit} applied=${n.applied} last=${n.storage.lastIndex()}`;
    })
    .join('; ');
}
