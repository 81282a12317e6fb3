// Fencing of the controller manager's ReplicaSet creates (issue 27), with real processes: two leader-elected
// `setpoint controller-manager`s on `setpoint apiserver`, on etcd 3.4 and on Setpoint's store. The leader's requests go through a
// proxy that holds them, so its first pod create is in flight when it is SIGSTOPped; the standby takes the
// Lease and creates every pod; then the proxy lets the held create through and the first manager resumes.
// Its create is refused (409 naming the lease, the holder and the caller), it exits 1 on the lost lease, and
// a watcher never sees more pods than replicas. Needs `npm run build` first.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderKubeconfig } from '../../src/apiserver/pki/kubeconfig.js';
import type { LeaseObject } from '../../src/client/lease-record.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { EVENTS, LEASES, PODS, REPLICASETS } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import type { Pod, ReplicaSet } from '../../src/controllers/apps-types.js';
import { startApiServerProcess, type ApiServerProcess } from '../../src/harness/apiserver-process.js';
import { HoldProxy } from '../../src/harness/hold-proxy.js';
import { startLeaderElected, type LeaderElectedProcess } from '../../src/harness/kinds/leader-elected-process.js';
import { waitFor } from '../../src/harness/wait.js';
import { STORE_KINDS, StoreTestCluster } from '../etcd-client/helpers/store-cluster.js';

type Manager = LeaderElectedProcess;

const NS = 'default';
const LEASE = 'fenced-controller-manager';
const REPLICAS = 8;

describe.each(STORE_KINDS)('controller manager fencing on %s', (store) => {
  let dir: string;
  let etcd: StoreTestCluster;
  let api: ApiServerProcess;
  let rest: RestClient;
  const running: Manager[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cm-fencing-'));
    etcd = await StoreTestCluster.start(store);
    api = await startApiServerProcess({ dir, etcdServers: etcd.endpoints() });
    rest = new RestClient(api.clientConfig);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(running.map((m) => m.proc.kill('SIGKILL')));
    rest?.close();
    await api?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  async function startManager(name: string, kubeconfig: string): Promise<Manager> {
    // A renew deadline long enough that the leader still leads when it is paused.
    const flags = ['--log-level=debug', '--controllers=replicaset', `--leader-elect-resource-name=${LEASE}`, '--leader-elect-lease-duration=6s', '--leader-elect-renew-deadline=5s', '--leader-elect-retry-period=500ms'];
    const m = await startLeaderElected('controller-manager', { name, dir, kubeconfig, flags });
    running.push(m);
    return m;
  }

  const holder = async (): Promise<LeaseObject['spec']> => (await new ResourceClient<LeaseObject>(rest, LEASES).get('kube-system', LEASE).catch(() => undefined))?.spec;
  const waitLeader = (m: Manager): Promise<unknown> => m.proc.waitReady(`${m.name} to hold ${LEASE}`, async () => (await holder())?.holderIdentity === m.identity, 60_000);

  it("refuses a deposed leader's in-flight pod create: never more pods than replicas", async () => {
    const proxy = new HoldProxy(api.port);
    const proxyPort = await proxy.start();
    const viaProxy = join(dir, 'via-proxy.kubeconfig');
    writeFileSync(viaProxy, renderKubeconfig({ server: `https://127.0.0.1:${proxyPort}`, caPem: api.caPem, userName: 'admin', clientCertPem: api.admin.certPem, clientKeyPem: api.admin.keyPem }), { mode: 0o600 });
    const pods = new ResourceClient<Pod>(rest, PODS);
    const watchAc = new AbortController();
    try {
      const a = await startManager('cm-a', viaProxy);
      await waitLeader(a);
      const b = await startManager('cm-b', api.kubeconfig);

      // Every pod that ever exists, from a watch opened before the ReplicaSet: the most seen alive at once.
      const alive = new Set<string>();
      let peak = 0;
      const from = (await pods.list(NS)).metadata.resourceVersion ?? '';
      const watching = (async () => {
        for await (const ev of pods.watch(NS, { resourceVersion: from, signal: watchAc.signal })) {
          const n = ev.object.metadata?.name ?? '';
          if (ev.type === 'ADDED') alive.add(n);
          if (ev.type === 'DELETED') alive.delete(n);
          peak = Math.max(peak, alive.size);
        }
      })().catch(() => undefined);

      proxy.hold();
      await new ResourceClient<ReplicaSet>(rest, REPLICASETS).create({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'fenced', namespace: NS },
        spec: { replicas: REPLICAS, selector: { matchLabels: { app: 'fenced' } }, template: { metadata: { labels: { app: 'fenced' } }, spec: { containers: [{ name: 'c', image: 'img' }] } } },
      });
      await waitFor('the leader to send its first create', () => a.lines.some((l) => l.msg === 'creating pods' && l.replicaSet === `${NS}/fenced`), { timeoutMs: 30_000 });
      a.proc.pause();
      await waitLeader(b);
      await waitFor(`${REPLICAS} pods`, async () => (await pods.list(NS, { labelSelector: 'app=fenced' })).items.length === REPLICAS, { timeoutMs: 60_000, intervalMs: 200 });
      proxy.release();
      a.proc.resume();
      const exit = await a.proc.exited(60_000);
      // As kube-controller-manager: a lost lease ends the process.
      expect(exit.code).toBe(1);
      expect(a.lines.some((l) => l.msg === 'leaderelection lost')).toBe(true);

      // b's ReplicaSet status shows the final count; nothing more appeared after a's writes were let through.
      await waitFor('the ReplicaSet status', async () => (await new ResourceClient<ReplicaSet>(rest, REPLICASETS).get(NS, 'fenced')).status?.replicas === REPLICAS, { timeoutMs: 30_000 });
      expect((await pods.list(NS, { labelSelector: 'app=fenced' })).items).toHaveLength(REPLICAS);
      watchAc.abort();
      await watching;
      expect(peak).toBe(REPLICAS);
      // a's held create met the API server's refusal (its FailedCreate event was refused the same way).
      const refusal = `Operation cannot be fulfilled on leases.coordination.k8s.io "${LEASE}": lease kube-system/${LEASE} is held by ${JSON.stringify(b.identity)} (transitions 1), not by the caller ${JSON.stringify(a.identity)} (transitions 0)`;
      const failures = a.lines.filter((l) => l.msg === 'reconcile failed; retrying' && l.key === `${NS}/fenced`).map((l) => String((l.err as { message?: string } | undefined)?.message ?? ''));
      expect(failures).toContain(refusal);
      const events = (await new ResourceClient(rest, EVENTS).list(NS)).items as Array<{ reason?: string; message?: string; source?: { host?: string } }>;
      expect(events.filter((e) => e.reason === 'FailedCreate' && e.source?.host === a.identity)).toEqual([]);
      expect(events.filter((e) => e.reason === 'SuccessfulCreate' && e.source?.host === b.identity).length).toBeGreaterThanOrEqual(REPLICAS - 1);
      console.log(`fencing: the deposed controller manager's held pod create was refused (${refusal}); peak pods ${peak} of ${REPLICAS}`);
      await b.proc.kill('SIGTERM');
    } finally {
      watchAc.abort();
      proxy.release();
      await proxy.stop();
    }
  }, 300_000);
});
