// The service account controller against a real API server: a `default` ServiceAccount in every active
// namespace (the system ones included), recreated when deleted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orUndefined, waitFor } from '../../src/harness/wait.js';
import { NAMESPACES, SERVICEACCOUNTS } from '../../src/client/resource-types.js';
import { serviceAccountFactory } from '../../src/controllers/service-account/service-account-controller.js';
import { STORE_KINDS } from '../etcd-client/helpers/store-cluster.js';
import { startControllerHarness, type ControllerHarness } from './controller-harness.js';

describe.each(STORE_KINDS)('service account controller on %s', (store) => {
  let h: ControllerHarness;
  beforeAll(async () => {
    h = await startControllerHarness({ store });
    h.start(serviceAccountFactory);
  });
  afterAll(async () => {
    await h?.stop();
  });

  const sa = (ns: string) => orUndefined(h.client(SERVICEACCOUNTS).get(ns, 'default'));

  it('creates default in every active namespace and brings it back when deleted', async () => {
    for (const ns of ['default', 'kube-system']) await waitFor(`default SA in ${ns}`, () => sa(ns));
    await h.client(NAMESPACES).create({ metadata: { name: 'team-a' } });
    const first = await waitFor('default SA in team-a', () => sa('team-a'));
    await h.client(SERVICEACCOUNTS).delete('team-a', 'default');
    const again = await waitFor('default SA recreated', async () => {
      const now = await sa('team-a');
      return now !== undefined && now.metadata?.uid !== first.metadata?.uid ? now : undefined;
    });
    expect(again.metadata?.name).toBe('default');
  });
});
