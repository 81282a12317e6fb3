// Fencing for leader-elected writers: a write that carries `Setpoint-Fencing-Token:
// <lease-namespace>/<lease-name>/<holder>/<leaseTransitions>` lands only while that Lease still names the
// holder at that transition. The Lease is read here and the write guarded with its mod_revision in the same
// Txn, so a Lease that moves between the check and the write fails the Txn; the guard is then checked again
// on the Lease as it is now (a renewal keeps holder and transition, so the write retries and lands).
import { StorageError, type Guard } from '../storage/interface.js';
import { StatusError, statuses } from '../status.js';
import type { StoreContext } from './store-context.js';

const LEASES = { group: 'coordination.k8s.io', resource: 'leases' };

export interface FencingToken {
  readonly namespace: string;
  readonly name: string;
  readonly holder: string;
  readonly transitions: number;
}

export function parseFencingToken(token: string): FencingToken {
  const parts = token.split('/');
  const [namespace, name, holder, transitions] = parts;
  if (parts.length !== 4 || !namespace || !name || !holder || transitions === undefined || !/^\d+$/.test(transitions)) {
    throw new StatusError(statuses.badRequest(`invalid Setpoint-Fencing-Token ${JSON.stringify(token)}: want <lease-namespace>/<lease-name>/<holder>/<leaseTransitions>`));
  }
  return { namespace, name, holder, transitions: Number(transitions) };
}

export async function fencingGuard(ctx: StoreContext, header: string): Promise<Guard> {
  const t = parseFencingToken(header);
  const key = `${ctx.etcdPrefix}/leases/${t.namespace}/${t.name}`;
  let lease;
  try {
    lease = await ctx.raw.get(key);
  } catch (e) {
    if (e instanceof StorageError && e.code === 'NotFound') throw new StatusError(statuses.conflict(LEASES, t.name, `the fencing token names lease ${t.namespace}/${t.name}, which does not exist`));
    throw e;
  }
  const spec = (lease['spec'] ?? {}) as { holderIdentity?: string; leaseTransitions?: number };
  const holder = spec.holderIdentity ?? '';
  const transitions = spec.leaseTransitions ?? 0;
  if (holder !== t.holder || transitions !== t.transitions) {
    throw new StatusError(
      statuses.conflict(
        LEASES,
        t.name,
        `lease ${t.namespace}/${t.name} is held by ${JSON.stringify(holder)} (transitions ${transitions}), not by the caller ${JSON.stringify(t.holder)} (transitions ${t.transitions})`,
      ),
    );
  }
  // A renewal moves the Lease's mod_revision but not its holder or transition: check it again then.
  return { key, modRevision: Number(lease.metadata.resourceVersion), refresh: () => fencingGuard(ctx, header) };
}
