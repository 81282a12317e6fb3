// DeploymentSync over listers and an actions recorder, with a small world that plays the ReplicaSet
// controller and the nodes: after each sync every ReplicaSet's pods exist at once and become available
// one step later. A rollout runs sync by sync, and at every step the totals stay within maxSurge and
// maxUnavailable.
import { beforeEach, describe, expect, it } from 'vitest';
import type { Deployment, ReplicaSet } from '../../../src/controllers/apps-types.js';
import { DESIRED_REPLICAS, MAX_REPLICAS, REVISION } from '../../../src/controllers/deployment/annotations.js';
import { DeploymentSync } from '../../../src/controllers/deployment/deployment-sync.js';
import { deployment, FakeWorkloads } from '../helpers/fake-workloads.js';

describe('DeploymentSync', () => {
  let f: FakeWorkloads;
  let sync: DeploymentSync;
  beforeEach(() => {
    f = new FakeWorkloads();
    sync = new DeploymentSync({ deployments: f.deployments, replicaSets: f.replicaSets, pods: f.pods, writer: f.deploymentWriter, recorder: f.recorder, wallNow: () => f.now });
  });

  const sets = (): ReplicaSet[] => f.replicaSets.list('default').sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
  const d = (name = 'web'): Deployment => f.deployments.get('default', name)!;

  /** The ReplicaSets' pods: status.replicas follows spec at once, available catches up one step later. */
  function step(): void {
    for (const rs of f.replicaSets.list('default')) {
      const want = rs.spec.replicas ?? 0;
      const avail = Math.min(want, (rs.status?.availableReplicas ?? 0) < want ? (rs.status?.replicas ?? 0) : want);
      f.replicaSets.upsert(f.stamp({ ...rs, status: { replicas: want, readyReplicas: avail, availableReplicas: avail, observedGeneration: rs.metadata.generation ?? 1 } }));
    }
  }

  async function converge(check?: () => void, max = 60): Promise<number> {
    for (let i = 0; i < max; i++) {
      await sync.sync('default/web');
      check?.();
      step();
      check?.();
      const st = d().status;
      const done = st?.conditions?.find((c) => c.type === 'Progressing')?.reason === 'NewReplicaSetAvailable' && st.updatedReplicas === d().spec.replicas && st.replicas === d().spec.replicas && st.availableReplicas === d().spec.replicas;
      if (done) return i;
    }
    throw new Error(`did not converge: ${JSON.stringify(d().status)}`);
  }

  it('creates <name>-<hash> with the hash label, selector and revision 1, then reports Available and NewReplicaSetAvailable', async () => {
    f.deployments.upsert(deployment('web', 3));
    await converge();
    const [rs] = sets();
    const hash = rs?.metadata.labels?.['pod-template-hash'];
    expect(rs?.metadata.name).toBe(`web-${hash}`);
    expect(rs?.spec.selector?.matchLabels).toEqual({ app: 'web', 'pod-template-hash': hash });
    expect(rs?.spec.template?.metadata?.labels).toEqual({ app: 'web', 'pod-template-hash': hash });
    expect(rs?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Deployment', name: 'web', uid: 'uid-web', controller: true });
    expect(rs?.metadata.annotations).toMatchObject({ [REVISION]: '1', [DESIRED_REPLICAS]: '3', [MAX_REPLICAS]: '4' });
    expect(d().metadata.annotations?.[REVISION]).toBe('1');
    expect(d().status).toMatchObject({ observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3, unavailableReplicas: 0 });
    const conds = Object.fromEntries((d().status?.conditions ?? []).map((c) => [c.type, [c.status, c.reason, c.message]]));
    expect(conds).toEqual({
      Available: ['True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'],
      Progressing: ['True', 'NewReplicaSetAvailable', `ReplicaSet "web-${hash}" has successfully progressed.`],
    });
    expect(f.events.map((e) => e.message)).toContain(`Scaled up replica set web-${hash} from 0 to 3`);
  });

  it.each<[string, number, number | string, number | string]>([
    ['defaults (25%/25%) on 10', 10, '25%', '25%'],
    ['maxSurge 0, maxUnavailable 1 on 4', 4, 0, 1],
    ['maxSurge 1, maxUnavailable 0 on 3', 3, 1, 0],
    ['50%/50% on 5', 5, '50%', '50%'],
  ])('a rolling update with %s never breaks maxSurge or maxUnavailable', async (_n, replicas, surge, unavailable) => {
    f.deployments.upsert(deployment('web', replicas, { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: surge, maxUnavailable: unavailable } } }));
    await converge();
    const maxTotal = replicas + (typeof surge === 'number' ? surge : Math.ceil((parseInt(surge) * replicas) / 100));
    const minAvail = replicas - (typeof unavailable === 'number' ? unavailable : Math.floor((parseInt(unavailable) * replicas) / 100));
    const cur = d();
    f.deployments.upsert(f.stamp({ ...cur, metadata: { ...cur.metadata, generation: 2 }, spec: { ...cur.spec, template: { ...cur.spec.template, spec: { containers: [{ name: 'c', image: 'img:2' }] } } } }));
    let peakTotal = 0;
    await converge(() => {
      const all = f.replicaSets.list('default');
      const total = all.reduce((n, rs) => n + (rs.spec.replicas ?? 0), 0);
      const avail = all.reduce((n, rs) => n + (rs.status?.availableReplicas ?? 0), 0);
      peakTotal = Math.max(peakTotal, total);
      expect(total).toBeLessThanOrEqual(maxTotal);
      expect(avail).toBeGreaterThanOrEqual(minAvail);
    });
    expect(sets().map((rs) => [rs.spec.replicas, rs.metadata.annotations?.[REVISION]])).toEqual([
      [0, '1'],
      [replicas, '2'],
    ]);
    expect(d().metadata.annotations?.[REVISION]).toBe('2');
    expect(d().status?.observedGeneration).toBe(2);
  });

  it('rolling back to the old template reuses its ReplicaSet and gives it the next revision', async () => {
    f.deployments.upsert(deployment('web', 2));
    await converge();
    const first = sets()[0]!;
    const v1 = d().spec.template!;
    let cur = d();
    f.deployments.upsert(f.stamp({ ...cur, metadata: { ...cur.metadata, generation: 2 }, spec: { ...cur.spec, template: { ...v1, spec: { containers: [{ name: 'c', image: 'img:2' }] } } } }));
    await converge();
    cur = d();
    // What kubectl rollout undo does: the old ReplicaSet's template (without the hash label) back into the spec.
    f.deployments.upsert(f.stamp({ ...cur, metadata: { ...cur.metadata, generation: 3 }, spec: { ...cur.spec, template: structuredClone(v1) } }));
    await converge();
    expect(sets()).toHaveLength(2);
    const back = f.replicaSets.get('default', first.metadata.name ?? '')!;
    expect(back.spec.replicas).toBe(2);
    expect(back.metadata.annotations?.[REVISION]).toBe('3');
    expect(back.metadata.annotations?.['deployment.kubernetes.io/revision-history']).toBe('1');
    expect(d().metadata.annotations?.[REVISION]).toBe('3');
  });

  it('Recreate scales the old ReplicaSet to zero before the new one gets any replica', async () => {
    f.deployments.upsert(deployment('web', 3, { strategy: { type: 'Recreate' } }));
    await converge();
    const cur = d();
    f.deployments.upsert(f.stamp({ ...cur, metadata: { ...cur.metadata, generation: 2 }, spec: { ...cur.spec, template: { ...cur.spec.template, spec: { containers: [{ name: 'c', image: 'img:2' }] } } } }));
    await converge(() => {
      const [old, next] = sets();
      if (next !== undefined && (next.spec.replicas ?? 0) > 0) expect(old?.status?.replicas ?? 0).toBe(0);
    });
  });

  it('a resize with no rollout under way scales the one active ReplicaSet', async () => {
    f.deployments.upsert(deployment('web', 3));
    await converge();
    const cur = d();
    f.deployments.upsert(f.stamp({ ...cur, spec: { ...cur.spec, replicas: 5 } }));
    await converge();
    expect(sets().map((rs) => rs.spec.replicas)).toEqual([5]);
    expect(f.events.at(-1)?.message).toMatch(/^Scaled up replica set web-\w+ from 3 to 5$/);
  });

  it('keeps only revisionHistoryLimit old ReplicaSets', async () => {
    f.deployments.upsert(deployment('web', 1, { revisionHistoryLimit: 1 }));
    await converge();
    for (const image of ['img:2', 'img:3', 'img:4']) {
      const cur = d();
      f.deployments.upsert(f.stamp({ ...cur, spec: { ...cur.spec, template: { ...cur.spec.template, spec: { containers: [{ name: 'c', image }] } } } }));
      await converge();
      await sync.sync('default/web');
    }
    expect(sets().map((rs) => rs.metadata.annotations?.[REVISION])).toEqual(['3', '4']);
  });

  it('paused: Progressing Unknown DeploymentPaused, no new ReplicaSet for a template change; resumed goes on', async () => {
    f.deployments.upsert(deployment('web', 2));
    await converge();
    let cur = d();
    f.deployments.upsert(f.stamp({ ...cur, spec: { ...cur.spec, paused: true, template: { ...cur.spec.template, spec: { containers: [{ name: 'c', image: 'img:2' }] } } } }));
    await sync.sync('default/web');
    expect(sets()).toHaveLength(1);
    expect(d().status?.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'Unknown', reason: 'DeploymentPaused', message: 'Deployment is paused' });
    cur = d();
    f.deployments.upsert(f.stamp({ ...cur, spec: { ...cur.spec, paused: false } }));
    await sync.sync('default/web');
    expect(sets()).toHaveLength(2);
    await converge();
  });

  it('no progress for progressDeadlineSeconds: Progressing False ProgressDeadlineExceeded', async () => {
    f.deployments.upsert(deployment('web', 2, { progressDeadlineSeconds: 60 }));
    // No step(): the pods never become available.
    const r = await sync.sync('default/web');
    expect(r.requeueAfterMs).toBeGreaterThan(0);
    f.now = new Date(f.now.getTime() + 61_000);
    await sync.sync('default/web');
    const c = d().status?.conditions?.find((x) => x.type === 'Progressing');
    expect(c).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    expect(c?.message).toMatch(/^ReplicaSet "web-\w+" has timed out progressing\.$/);
    expect(d().status?.conditions?.find((x) => x.type === 'Available')).toMatchObject({ status: 'False', reason: 'MinimumReplicasUnavailable' });
  });

  it('adopts a matching orphan ReplicaSet with the same template instead of creating one', async () => {
    const dep = deployment('web', 2);
    f.deployments.upsert(dep);
    await f.deploymentWriter.createReplicaSet('default', { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-manual', labels: { app: 'web' } }, spec: { replicas: 2, selector: dep.spec.selector!, template: structuredClone(dep.spec.template!) } });
    await converge();
    expect(sets().map((rs) => rs.metadata.name)).toEqual(['web-manual']);
    expect(sets()[0]?.metadata.ownerReferences?.[0]?.uid).toBe('uid-web');
  });
});
