// ReplicaSetSync against listers and an actions recorder: creates in slow-start batches under
// expectations, deletes by rank, adopts and releases, reports FailedCreate and its status.
import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/client/manual-clock.js';
import { Expectations } from '../../../src/controllers/replicaset/expectations.js';
import { ReplicaSetSync } from '../../../src/controllers/replicaset/replica-set-sync.js';
import { FakeWorkloads, pod, replicaSet } from '../helpers/fake-workloads.js';

describe('ReplicaSetSync', () => {
  let f: FakeWorkloads;
  let clock: ManualClock;
  let exp: Expectations;
  let sync: ReplicaSetSync;
  beforeEach(() => {
    f = new FakeWorkloads();
    clock = new ManualClock();
    exp = new Expectations(clock);
    sync = new ReplicaSetSync({ replicaSets: f.replicaSets, pods: f.pods, podControl: f.podControl, rsWriter: f.rsWriter, expectations: exp, recorder: f.recorder, wallNow: () => f.now });
  });

  it('creates the missing pods with a controllerRef and one SuccessfulCreate event each, then reports them', async () => {
    f.replicaSets.upsert(replicaSet('web', 3));
    await sync.sync('default/web');
    const created = f.pods.list('default');
    expect(created).toHaveLength(3);
    for (const p of created) {
      expect(p.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'uid-web', controller: true, blockOwnerDeletion: true }]);
      expect(p.metadata.labels).toEqual({ app: 'web' });
    }
    expect(f.events.map((e) => `${e.reason}: ${e.message}`).sort()).toEqual(created.map((p) => `SuccessfulCreate: Created pod: ${p.metadata.name}`).sort());
    // Status counts what the cache held at the start; the informer's events for the new pods bring the next sync.
    expect(f.replicaSets.get('default', 'web')?.status).toMatchObject({ replicas: 0, observedGeneration: 1 });
    await sync.sync('default/web');
    expect(f.replicaSets.get('default', 'web')?.status).toMatchObject({ replicas: 3, observedGeneration: 1 });
    expect(f.actionsOf('create', 'pods')).toHaveLength(3);
  });

  it('never creates again while its own creates are unobserved', async () => {
    f.observe = false;
    f.replicaSets.upsert(replicaSet('web', 3));
    await sync.sync('default/web');
    await sync.sync('default/web');
    expect(f.actionsOf('create', 'pods')).toHaveLength(3);
    expect(exp.pending('default/web')).toEqual({ add: 3, del: 0 });
    exp.creationObserved('default/web');
    exp.creationObserved('default/web');
    exp.creationObserved('default/web');
    f.observe = true;
    // The informer never delivered the pods (lost): satisfied expectations let it try again.
    await sync.sync('default/web');
    expect(f.actionsOf('create', 'pods')).toHaveLength(6);
  });

  it('expectations expire after five minutes', async () => {
    f.observe = false;
    f.replicaSets.upsert(replicaSet('web', 2));
    await sync.sync('default/web');
    clock.advance(5 * 60 * 1000 + 1);
    await sync.sync('default/web');
    expect(f.actionsOf('create', 'pods')).toHaveLength(4);
  });

  it('stops at the first failed batch, subtracts the skipped creates, and reports the API error', async () => {
    f.createError = (n) => (n >= 1 ? new Error('admission webhook "deny.example.com" denied the request: no') : undefined);
    f.replicaSets.upsert(replicaSet('web', 10));
    await expect(sync.sync('default/web')).rejects.toThrow(/denied the request/);
    // Batch 1 (ok), batch 2 (both fail): 3 attempts, 7 skipped.
    expect(f.actionsOf('create', 'pods')).toHaveLength(3);
    expect(exp.pending('default/web')).toEqual({ add: 1, del: 0 });
    const failed = f.events.filter((e) => e.reason === 'FailedCreate');
    expect(failed[0]).toEqual({ object: 'default/web', type: 'Warning', reason: 'FailedCreate', message: 'Error creating: admission webhook "deny.example.com" denied the request: no' });
    const cond = f.replicaSets.get('default', 'web')?.status?.conditions?.[0];
    expect(cond).toMatchObject({ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'admission webhook "deny.example.com" denied the request: no' });
    // The next failure replaces the message (Kubernetes keeps the first: k/k#127081); success clears it.
    exp.creationObserved('default/web');
    f.createError = () => new Error('pods "web-" is forbidden: exceeded quota');
    await expect(sync.sync('default/web')).rejects.toThrow(/quota/);
    expect(f.replicaSets.get('default', 'web')?.status?.conditions?.[0]?.message).toBe('pods "web-" is forbidden: exceeded quota');
    f.createError = undefined;
    exp.creationObserved('default/web');
    await sync.sync('default/web');
    expect(f.replicaSets.get('default', 'web')?.status?.conditions).toBeUndefined();
    expect(f.pods.list('default')).toHaveLength(10);
  });

  it('deletes the extra pods by rank (unscheduled and not ready first)', async () => {
    const rs = replicaSet('web', 2);
    f.replicaSets.upsert(rs);
    for (const p of [pod('a', { owner: rs, node: 'n1' }), pod('b', { owner: rs }), pod('c', { owner: rs, node: 'n1', ready: false }), pod('d', { owner: rs, node: 'n2' })]) f.pods.upsert(p);
    await sync.sync('default/web');
    expect(f.actionsOf('delete', 'pods').map((a) => a.name).sort()).toEqual(['b', 'c']);
    expect(f.events.filter((e) => e.reason === 'SuccessfulDelete').map((e) => e.message).sort()).toEqual(['Deleted pod: b', 'Deleted pod: c']);
  });

  it('adopts matching orphans, releases owned pods that stopped matching, ignores pods of another controller', async () => {
    const rs = replicaSet('web', 2);
    const other = replicaSet('other', 1);
    f.replicaSets.upsert(rs);
    f.pods.upsert(pod('orphan'));
    f.pods.upsert(pod('moved', { owner: rs, labels: { app: 'db' } }));
    f.pods.upsert(pod('theirs', { owner: other }));
    await sync.sync('default/web');
    expect(f.actionsOf('patch', 'pods').map((a) => a.name).sort()).toEqual(['moved', 'orphan']);
    expect(f.pods.get('default', 'orphan')?.metadata.ownerReferences?.[0]?.uid).toBe('uid-web');
    expect(f.pods.get('default', 'moved')?.metadata.ownerReferences).toEqual([]);
    // One adopted + one created.
    expect(f.actionsOf('create', 'pods')).toHaveLength(1);
  });

  it('counts ready and available pods with minReadySeconds and asks to look again when they will be available', async () => {
    const rs = replicaSet('web', 2, { app: 'web' }, { minReadySeconds: 30 });
    f.replicaSets.upsert(rs);
    f.pods.upsert(pod('old', { owner: rs, node: 'n', readySince: new Date(f.now.getTime() - 60_000).toISOString() }));
    f.pods.upsert(pod('new', { owner: rs, node: 'n', readySince: new Date(f.now.getTime() - 5_000).toISOString() }));
    const r = await sync.sync('default/web');
    expect(f.replicaSets.get('default', 'web')?.status).toMatchObject({ replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 1 });
    expect(r.requeueAfterMs).toBe(30_000);
  });

  it('a deleted ReplicaSet forgets its expectations', async () => {
    exp.expectCreations('default/gone', 3);
    await sync.sync('default/gone');
    expect(exp.pending('default/gone')).toBeUndefined();
  });
});
