// Clusters a describe block starts once for all its tests (in beforeAll): torn down in afterAll, and when
// one of its tests failed, each cluster's diagnostics (where its data is, how each member's log ends) are
// printed and its data and logs kept, to read the failure.
import { afterAll, afterEach } from 'vitest';
import type { StoreCluster } from '../../src/harness/store-cluster.js';

export interface SuiteClusters {
  /** Registers a cluster for teardown (and for the report of a failure); returns it. */
  track<C extends StoreCluster>(c: C): C;
}

/** Call at the top of the describe block. `keepAlways`: keep the data even when everything passed. */
export function suiteClusters(keepAlways = false): SuiteClusters {
  const clusters: StoreCluster[] = [];
  let failed = false;
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') failed = true;
  });
  afterAll(async () => {
    for (const c of clusters) {
      if (failed) console.error(`a test failed: ${c.program} cluster kept\n${c.diagnostics()}`);
      else if (keepAlways) console.log(`kept: ${c.dir}`);
    }
    await Promise.all(clusters.splice(0).map((c) => c.destroy({ keep: failed || keepAlways })));
  });
  return {
    track(c) {
      clusters.push(c);
      return c;
    },
  };
}
