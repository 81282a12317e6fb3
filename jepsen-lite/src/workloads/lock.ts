// Lease locks from several clients (etcdctl lock's algorithm). In each critical section a client appends
// its element to two lists by read-modify-write: one unguarded (relies on the lock alone — known to be
// unsafe in etcd under pauses and partitions, Jepsen 3.4.3), one in a Txn guarded on the lock key's
// create revision (the fencing token), which must never lose an update.
import { checkLock } from '../checkers/lock-checker.js';
import type { CheckResult } from '../checkers/result.js';
import { EtcdClient } from '../etcd-client.js';
import type { RunContext, WorkerHandle, Workload } from '../workload.js';
import { acquireLock, LeaseSession } from './lock-session.js';

const LOCK = '/jepsen/lock/mutex/';
export const UNFENCED = '/jepsen/lock/unfenced';
export const FENCED = '/jepsen/lock/fenced';
const TTL_SECONDS = 3;

const parseList = (v: string | undefined): number[] => (v ? v.split(',').filter(Boolean).map(Number) : []);

export class LockWorkload implements Workload {
  readonly name = 'lock';
  private next = 1;
  readonly finals: { unfenced: number[] | undefined; fenced: number[] | undefined } = { unfenced: undefined, fenced: undefined };

  concurrency(requested: number): number {
    return Math.min(requested, 5);
  }

  async worker(w: WorkerHandle): Promise<void> {
    while (await w.pace()) {
      let session: LeaseSession | undefined;
      let held: { key: string; rev: number } | undefined;
      const acq = await w.invoke('acquire', LOCK, undefined, 'write', async (c) => {
        session = await LeaseSession.open(c, TTL_SECONDS, w.timeoutMs);
        held = await acquireLock(c, LOCK, session, w.timeoutMs, Date.now() + 5 * w.timeoutMs);
        return { outcome: 'ok', output: held.rev };
      });
      if (acq.outcome !== 'ok' || !held) {
        await session?.close(w.timeoutMs);
        continue;
      }
      const lock = held;
      await new Promise((r) => setTimeout(r, w.rng.int(30)));
      const e1 = this.next++;
      await w.invoke('unfenced-add', UNFENCED, e1, 'write', async (c) => {
        const cur = await c.range(UNFENCED, {}, w.timeoutMs);
        await c.put(UNFENCED, [...parseList(cur.kvs[0]?.value), e1].join(','), w.timeoutMs);
        return { outcome: 'ok' };
      });
      const e2 = this.next++;
      await w.invoke('fenced-add', FENCED, e2, 'write', async (c) => {
        const cur = await c.range(FENCED, {}, w.timeoutMs);
        const t = await c.txn(
          [{ key: lock.key, target: 'CREATE', result: 'EQUAL', rev: lock.rev }],
          [{ put: { key: FENCED, value: [...parseList(cur.kvs[0]?.value), e2].join(',') } }],
          [],
          w.timeoutMs,
        );
        // A rejected fence certainly wrote nothing: fail, not info.
        return { outcome: t.succeeded ? 'ok' : 'fail', output: lock.rev };
      });
      await w.invoke('release', LOCK, lock.rev, 'write', async (c) => {
        await c.del(lock.key, w.timeoutMs);
        return { outcome: 'ok' };
      });
      await session?.close(w.timeoutMs);
    }
  }

  async finish(ctx: RunContext): Promise<void> {
    const s = ctx.cluster.members().find((m) => m.state === 'up') ?? ctx.cluster.slots[0]!;
    const c = new EtcdClient(ctx.cluster.endpoint(s.index));
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        this.finals.unfenced = parseList((await c.range(UNFENCED, {}, 5000)).kvs[0]?.value);
        this.finals.fenced = parseList((await c.range(FENCED, {}, 5000)).kvs[0]?.value);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    c.close();
  }

  async check(ctx: RunContext): Promise<CheckResult[]> {
    return [checkLock(ctx.history.ops, this.finals)];
  }
}
