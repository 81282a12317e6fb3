// The pod garbage collector: the plan of one pass (pure), then the controller against a real API server
// with a small threshold and a short quarantine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotFound } from '../../src/client/api-status-error.js';
import { NODES, PODS } from '../../src/client/resource-types.js';
import type { PodObject } from '../../src/controllers/node-lifecycle/node-types.js';
import { podGcFactory } from '../../src/controllers/pod-gc/pod-gc-controller.js';
import { planPodGc } from '../../src/controllers/pod-gc/pod-gc-plan.js';
import { waitFor } from '../../src/harness/wait.js';
import { STORE_KINDS } from '../etcd-client/helpers/store-cluster.js';
import { startControllerHarness, type ControllerHarness } from './controller-harness.js';

const p = (name: string, created: string, phase: string, nodeName = '', deleting = false): PodObject => ({
  metadata: { name, namespace: 'ns', creationTimestamp: created, ...(deleting ? { deletionTimestamp: created } : {}) },
  spec: { nodeName },
  status: { phase },
});

describe('pod GC plan', () => {
  it('takes the oldest terminated pods beyond the threshold, orphans of quarantined nodes, unscheduled terminating pods', () => {
    const pods = [
      p('new-done', '2026-01-01T00:00:03Z', 'Succeeded'),
      p('old-done', '2026-01-01T00:00:01Z', 'Failed'),
      p('mid-done', '2026-01-01T00:00:02Z', 'Succeeded'),
      p('running', '2026-01-01T00:00:00Z', 'Running', 'n1'),
      p('orphan', '2026-01-01T00:00:00Z', 'Running', 'gone'),
      p('waiting', '2026-01-01T00:00:00Z', 'Running', 'just-gone'),
      p('unscheduled', '2026-01-01T00:00:00Z', 'Pending', '', true),
    ];
    const plan = planPodGc({ pods, nodeKnown: (n) => n === 'n1', nodeQuarantined: (n) => n === 'gone', terminatedThreshold: 1 });
    expect(plan.terminated.map((x) => x.metadata?.name)).toEqual(['old-done', 'mid-done']);
    expect([...plan.orphaned.entries()].map(([n, l]) => [n, l.map((x) => x.metadata?.name)])).toEqual([['gone', ['orphan']]]);
    expect([...plan.missingNodes].sort()).toEqual(['gone', 'just-gone']);
    expect(plan.unscheduledTerminating.map((x) => x.metadata?.name)).toEqual(['unscheduled']);
    expect(planPodGc({ pods, nodeKnown: () => true, nodeQuarantined: () => false, terminatedThreshold: 0 }).terminated).toEqual([]);
  });
});

describe.each(STORE_KINDS)('pod GC controller on %s', (store) => {
  let h: ControllerHarness;
  beforeAll(async () => {
    h = await startControllerHarness({ store });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const exists = async (name: string): Promise<boolean> => {
    try {
      await h.client(PODS).get('default', name);
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  };

  async function pod(name: string, phase: string, nodeName?: string): Promise<void> {
    await h.client(PODS).create({ metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x' }], ...(nodeName ? { nodeName } : {}) } });
    await h.client(PODS).patchStatus('default', name, 'merge', { status: { phase } });
  }

  it('deletes the oldest terminated pods over the threshold and the pods of a node that is gone', async () => {
    await h.client(NODES).create({ metadata: { name: 'n1' } });
    await pod('t-a', 'Succeeded');
    await pod('t-b', 'Failed');
    await pod('t-c', 'Succeeded');
    await pod('live', 'Running', 'n1');
    await pod('lost', 'Running', 'ghost');
    h.start(podGcFactory({ terminatedPodGcThreshold: 2, periodMs: 200, quarantineMs: 500 }));
    await waitFor('the oldest terminated pod and the lost pod deleted', async () => !(await exists('t-a')) && !(await exists('lost')));
    expect(await exists('t-b')).toBe(true);
    expect(await exists('t-c')).toBe(true);
    expect(await exists('live')).toBe(true);
  });
});
