// Read / write / compare-and-set on about ten registers with unique written values. Like Jepsen's
// independent keys, each register retires after a fixed number of operations and a fresh key takes its
// place, so every per-key history stays small enough to search.
import { checkRegister } from '../checkers/register-checker.js';
import type { CheckResult } from '../checkers/result.js';
import type { RunContext, WorkerHandle, Workload } from '../workload.js';

export interface RegisterOptions {
  keys: number;
  opsPerKey: number;
  prefix: string;
}

export class RegisterWorkload implements Workload {
  readonly name = 'register';
  private readonly gen: number[];
  private readonly used: number[];
  private nextValue = 1;
  /** Last value seen or written per key: what a CAS expects, so CASes often succeed. */
  private readonly last = new Map<string, number>();

  constructor(private readonly o: RegisterOptions = { keys: 10, opsPerKey: 200, prefix: '/jepsen/register/' }) {
    this.gen = new Array<number>(o.keys).fill(0);
    this.used = new Array<number>(o.keys).fill(0);
  }

  private pickKey(slot: number): string {
    if (this.used[slot]! >= this.o.opsPerKey) {
      this.gen[slot]!++;
      this.used[slot] = 0;
    }
    this.used[slot]!++;
    return `${this.o.prefix}${slot}-${this.gen[slot]}`;
  }

  async worker(w: WorkerHandle): Promise<void> {
    while (await w.pace()) {
      const key = this.pickKey(w.rng.int(this.o.keys));
      const r = w.rng.float();
      const expected = this.last.get(key);
      if (r < 0.5) {
        const serializable = w.serializableReads;
        await w.invoke('read', key, undefined, 'read', async (c) => {
          const res = await c.range(key, { serializable }, w.timeoutMs);
          const v = res.kvs[0] ? Number(res.kvs[0].value) : null;
          if (v !== null) this.last.set(key, v);
          return { outcome: 'ok', output: v };
        });
      } else if (r < 0.75 || expected === undefined) {
        const value = this.nextValue++;
        this.last.set(key, value);
        await w.invoke('write', key, value, 'write', async (c) => {
          await c.put(key, String(value), w.timeoutMs);
          return { outcome: 'ok', output: true };
        });
      } else {
        const to = this.nextValue++;
        await w.invoke('cas', key, [expected, to], 'write', async (c) => {
          const res = await c.txn([{ key, target: 'VALUE', result: 'EQUAL', value: String(expected) }], [{ put: { key, value: String(to) } }], [], w.timeoutMs);
          if (res.succeeded) this.last.set(key, to);
          // A failed compare is an observation (the value was not `expected`), recorded as ok/false.
          return { outcome: 'ok', output: res.succeeded };
        });
      }
    }
  }

  async finish(): Promise<void> {}

  async check(ctx: RunContext): Promise<CheckResult[]> {
    return [checkRegister(ctx.history.ops, { budgetMs: ctx.checkBudgetMs, explain: 3 })];
  }
}
