// Unique appends: every element is its own key under a prefix. After the run heals, a final read on
// every member must contain each acknowledged element (no lost writes) and nothing never written.
import type { CheckResult } from '../checkers/result.js';
import { checkSet } from '../checkers/set-checker.js';
import type { RunContext, WorkerHandle, Workload } from '../workload.js';
import { EtcdClient } from '../etcd-client.js';

const PREFIX = '/jepsen/set/';

export class SetWorkload implements Workload {
  readonly name = 'set';
  private next = 1;
  /** Final reads per member name (undefined: never answered). */
  readonly finalReads = new Map<string, number[] | undefined>();

  async worker(w: WorkerHandle): Promise<void> {
    while (await w.pace()) {
      const e = this.next++;
      await w.invoke('add', PREFIX, e, 'write', async (c) => {
        await c.put(`${PREFIX}${String(e).padStart(8, '0')}`, String(e), w.timeoutMs);
        return { outcome: 'ok' };
      });
    }
  }

  async finish(ctx: RunContext): Promise<void> {
    for (const s of ctx.cluster.members()) {
      const c = new EtcdClient(ctx.cluster.endpoint(s.index));
      let got: number[] | undefined;
      for (let attempt = 0; attempt < 20 && got === undefined; attempt++) {
        const start = ctx.history.now();
        try {
          const r = await c.range(PREFIX, { prefix: true }, 5000);
          got = r.kvs.map((kv) => Number(kv.value));
          ctx.history.add({ id: ctx.history.newId(), process: -1, worker: -1, node: s.index, f: 'final-read', key: PREFIX, outcome: 'ok', output: got.length, start, end: ctx.history.now() });
        } catch {
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      c.close();
      this.finalReads.set(s.name, got);
    }
  }

  async check(ctx: RunContext): Promise<CheckResult[]> {
    return [checkSet(ctx.history.ops, this.finalReads)];
  }
}
