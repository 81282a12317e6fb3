// A real etcd 3.4 (the Debian package) on free loopback ports in a temp dir, started by the harness: the
// reference that the server-level differential tests run the same commands against.
import { healthy } from '../../../src/harness/http-get.js';
import { StoreCluster } from '../../../src/harness/store-cluster.js';
import type { StoreClusterOptions } from '../../../src/harness/store-cluster.js';
import { waitFor } from '../../../src/harness/wait.js';

export interface ReferenceEtcd {
  readonly endpoint: string;
  readonly log: () => string;
  stop(): Promise<void>;
}

function reference(c: StoreCluster, name: string): ReferenceEtcd {
  return { endpoint: c.clientUrl(name), log: () => c.logSince(name), stop: () => c.destroy() };
}

const ONE: StoreClusterOptions = { program: 'etcd', size: 1, names: ['ref'], label: 'setpoint-etcd-ref-' };

function oneMember(): Promise<StoreCluster> {
  return StoreCluster.create(ONE);
}

export async function startReferenceEtcd(extraArgs: readonly string[] = []): Promise<ReferenceEtcd> {
  return reference(await StoreCluster.start({ ...ONE, flags: extraArgs }), 'ref');
}

/**
 * A one-member etcd on a data directory that `prepare` makes first (`etcdctl snapshot restore`), given the
 * member's name, peer URL and initial cluster, which a restore bakes into the data.
 */
export async function startReferenceEtcdOn(prepare: (me: { name: string; peer: string; initialCluster: string }) => Promise<string>): Promise<ReferenceEtcd> {
  const c = await oneMember();
  try {
    const dataDir = await prepare({ name: 'ref', peer: c.peerUrl('ref'), initialCluster: c.foundersCluster() });
    // A later --data-dir wins over the harness's own.
    c.get('ref').flags.push('--data-dir', dataDir);
    await c.startFounders('ready');
  } catch (e) {
    await c.destroy();
    throw e;
  }
  return reference(c, 'ref');
}

/**
 * A real etcd that has lost its leader: a two-member cluster whose second member is stopped once both
 * are up, leaving the first without a quorum (and so, after an election timeout, without a leader).
 */
export async function startLeaderlessEtcd(): Promise<ReferenceEtcd> {
  const c = await StoreCluster.start({ program: 'etcd', size: 2, names: ['a', 'b'], label: 'setpoint-etcd-ref-' });
  try {
    await c.kill('b', 'SIGTERM');
    await waitFor('the remaining member to lose its leader', async () => !(await healthy(c.clientUrl('a'))));
  } catch (e) {
    await c.destroy();
    throw e;
  }
  return reference(c, 'a');
}
