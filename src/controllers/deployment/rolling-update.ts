// RollingUpdate (k/k deployment/rolling.go): grow the new ReplicaSet while the total stays within
// replicas + maxSurge, shrink old ones while the available pods stay at least replicas - maxUnavailable —
// first the old pods that are not available anyway (they cost nothing), then as many available ones as
// the budget allows — and when complete, clean up old ReplicaSets beyond the history limit.
import type { ReplicaSet } from '../apps-types.js';
import { specReplicas } from '../apps-types.js';
import type { DeploymentRun } from './deployment-sync.js';
import { deploymentComplete } from './deployment-status.js';
import { activeReplicaSets, availableReplicaCount, byCreation, maxUnavailable, newRSNewReplicas, replicaCount, rsReplicas } from './rollout-math.js';
import { syncRolloutStatus } from './rollout-status.js';

export async function rolloutRolling(run: DeploymentRun): Promise<void> {
  const { newRS, old } = await run.newAndOld(true);
  if (newRS === undefined) throw new Error('rolling update: no new ReplicaSet after creating it');
  const status = async (): Promise<void> => {
    const [fresh] = current(run, [newRS]);
    await syncRolloutStatus(run, [...current(run, old), fresh], fresh);
  };
  if (await reconcileNewReplicaSet(run, [...old, newRS], newRS)) return status();
  if (await reconcileOldReplicaSets(run, [...old, newRS], activeReplicaSets(old), newRS)) return status();
  if (deploymentComplete(run.d, run.d.status ?? {})) await run.cleanup(current(run, old));
  return status();
}

/** The run's latest copies of these ReplicaSets (scaling replaces them). */
function current(run: DeploymentRun, sets: readonly ReplicaSet[]): ReplicaSet[] {
  return sets.map((s) => run.sets.find((x) => x.metadata.uid === s.metadata.uid) ?? s);
}

async function reconcileNewReplicaSet(run: DeploymentRun, all: ReplicaSet[], newRS: ReplicaSet): Promise<boolean> {
  const want = specReplicas(run.d);
  if (rsReplicas(newRS) === want) return false;
  const size = rsReplicas(newRS) > want ? want : newRSNewReplicas(run.d, all, newRS);
  if (size === rsReplicas(newRS)) return false;
  await run.scaleReplicaSet(newRS, size);
  return true;
}

async function reconcileOldReplicaSets(run: DeploymentRun, all: ReplicaSet[], oldActive: ReplicaSet[], newRS: ReplicaSet): Promise<boolean> {
  if (replicaCount(oldActive) === 0) return false;
  const d = run.d;
  const minAvailable = specReplicas(d) - maxUnavailable(d);
  const newUnavailable = rsReplicas(newRS) - (newRS.status?.availableReplicas ?? 0);
  const maxScaledDown = replicaCount(all) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return false;
  const cleaned = await cleanupUnhealthyReplicas(run, oldActive, maxScaledDown);
  const old = current(run, oldActive);
  const scaled = await scaleDownOldForRollingUpdate(run, [...old, newRS], old);
  return cleaned + scaled > 0;
}

/** Old replicas that are not available are removed first, up to the budget. */
async function cleanupUnhealthyReplicas(run: DeploymentRun, old: ReplicaSet[], maxCleanup: number): Promise<number> {
  let total = 0;
  for (const rs of [...old].sort(byCreation)) {
    if (total >= maxCleanup) break;
    const unhealthy = rsReplicas(rs) - (rs.status?.availableReplicas ?? 0);
    if (rsReplicas(rs) === 0 || unhealthy <= 0) continue;
    const n = Math.min(maxCleanup - total, unhealthy);
    await run.scaleReplicaSet(rs, rsReplicas(rs) - n);
    total += n;
  }
  return total;
}

/** Then available old replicas, oldest ReplicaSet first, while replicas - maxUnavailable stay available. */
async function scaleDownOldForRollingUpdate(run: DeploymentRun, all: ReplicaSet[], old: ReplicaSet[]): Promise<number> {
  const minAvailable = specReplicas(run.d) - maxUnavailable(run.d);
  const available = availableReplicaCount(all);
  if (available <= minAvailable) return 0;
  const budget = available - minAvailable;
  let total = 0;
  for (const rs of [...old].sort(byCreation)) {
    if (total >= budget) break;
    if (rsReplicas(rs) === 0) continue;
    const n = Math.min(rsReplicas(rs), budget - total);
    await run.scaleReplicaSet(rs, rsReplicas(rs) - n);
    total += n;
  }
  return total;
}
