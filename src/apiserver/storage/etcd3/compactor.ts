// The store's history compacted on an interval (--etcd-compaction-interval, 5 minutes), as kube-apiserver
// does it: every interval, compact to the revision seen one interval before. Several API servers on one
// store take turns through the version of the key `compact_rev_key`: each compares it with the version it
// last saw and bumps it in one Txn, so only the one whose compare holds compacts in that interval; the
// others learn the new version and try again an interval later (so a dead compactor is taken over).
import { pino } from 'pino';
import type { Logger } from 'pino';
import type { EtcdClient } from '../../../etcd-client/etcd-client.js';
import { EtcdClientError } from '../../../etcd-client/errors.js';

/** The key Kubernetes' compactors agree through: shared with any kube-apiserver on the same etcd. */
export const COMPACT_REV_KEY = 'compact_rev_key';

export interface CompactorOptions {
  /** 0 turns compaction off. */
  readonly intervalMs?: number;
  readonly logger?: Logger;
}

export class Compactor {
  private readonly intervalMs: number;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** The version of compact_rev_key this compactor last saw (its "compact time"). */
  private expectVersion = 0;
  /** The store's revision when the last step ran: what the next step compacts to. */
  private revision = 0;
  private compacted = 0;

  constructor(
    private readonly client: EtcdClient,
    opts: CompactorOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 5 * 60_000;
    this.log = (opts.logger ?? pino({ enabled: false })).child({ component: 'compactor' });
  }

  /** The revision the store was last compacted to by anyone, as far as this compactor knows. */
  get compactRevision(): number {
    return this.compacted;
  }

  /** The first compaction happens one interval after start, as Kubernetes' does. */
  start(): void {
    if (this.intervalMs <= 0 || this.timer) return;
    this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.running = this.step().then(
        () => undefined,
        (e: unknown) => this.log.error({ err: e instanceof Error ? e.message : String(e), endpoints: this.client.endpoints }, 'etcd compact failed'),
      );
      // stop() clears the timer: a round that ends after it schedules no more.
      void this.running.then(() => this.timer && this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /**
   * One round: take the turn if compact_rev_key is still at the version seen last (writing the revision
   * seen last into it) and compact to that revision; otherwise learn who compacted, and to what.
   */
  async step(): Promise<void> {
    const res = await this.client.txn({
      compare: [{ key: COMPACT_REV_KEY, target: 'VERSION', result: 'EQUAL', revision: this.expectVersion }],
      success: [{ put: { key: COMPACT_REV_KEY, value: String(this.revision) } }],
      failure: [{ range: { key: COMPACT_REV_KEY } }],
    });
    const target = this.revision;
    this.revision = res.revision;
    if (!res.succeeded) {
      const r = res.results[0];
      const kv = r?.kind === 'range' ? r.range.kvs[0] : undefined;
      if (kv) {
        this.expectVersion = kv.version;
        const theirs = Number(kv.value.toString());
        if (Number.isSafeInteger(theirs) && theirs > 0) this.compacted = theirs;
      }
      return;
    }
    this.expectVersion++;
    // The first turn only records where the store is: nothing is compacted on start.
    if (target === 0) return;
    try {
      await this.client.compact(target);
    } catch (e) {
      // Someone compacted further already (etcdctl, another tool): nothing left to do.
      if (!(e instanceof EtcdClientError && e.code === 'ETCD_COMPACTED')) throw e;
    }
    this.compacted = target;
    this.log.info({ revision: target }, 'compacted the store');
  }
}
