// Recreate (k/k deployment/recreate.go): scale every old ReplicaSet to zero, wait until none of their pods
// is left running, then create (or scale up) the new one to the full size.
import type { Pod, ReplicaSet } from '../apps-types.js';
import { specReplicas } from '../apps-types.js';
import type { DeploymentRun } from './deployment-sync.js';
import { deploymentComplete } from './deployment-status.js';
import { activeReplicaSets, rsReplicas } from './rollout-math.js';
import { syncRolloutStatus } from './rollout-status.js';

export async function rolloutRecreate(run: DeploymentRun, podsOf: (rs: ReplicaSet) => Pod[]): Promise<void> {
  let { newRS, old } = await run.newAndOld(false);
  let scaledDown = false;
  for (const rs of activeReplicaSets(old)) {
    await run.scaleReplicaSet(rs, 0);
    scaledDown = true;
  }
  if (scaledDown) return syncRolloutStatus(run, [...old, newRS], newRS);
  if (oldPodsRunning(newRS, old, podsOf)) return syncRolloutStatus(run, [...old, newRS], newRS);
  if (newRS === undefined) ({ newRS, old } = await run.newAndOld(true));
  if (newRS !== undefined && rsReplicas(newRS) !== specReplicas(run.d)) newRS = await run.scaleReplicaSet(newRS, specReplicas(run.d));
  if (deploymentComplete(run.d, run.d.status ?? {})) await run.cleanup(old);
  return syncRolloutStatus(run, [...old, newRS], newRS);
}

/** Old ReplicaSets still report pods, or the cache still holds one of their pods not yet terminated. */
function oldPodsRunning(newRS: ReplicaSet | undefined, old: readonly ReplicaSet[], podsOf: (rs: ReplicaSet) => Pod[]): boolean {
  if (old.some((rs) => (rs.status?.replicas ?? 0) > 0)) return true;
  return old
    .filter((rs) => rs.metadata.uid !== newRS?.metadata.uid)
    .some((rs) => podsOf(rs).some((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded'));
}
