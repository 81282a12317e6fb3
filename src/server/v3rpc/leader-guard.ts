// etcd's gRPC interceptors' member checks: a call carrying `hasleader=true` (clientv3 sets it on watches
// and lease keep-alives) is refused with "etcdserver: no leader" while the member knows no leader, and
// such streams already open are canceled once the member has gone three election timeouts without one
// (reconnecting streams costs more than refusing new calls, so etcd waits). A learner serves only
// serializable ranges and Status; the learner flag is asked of the store on every call when it can answer
// synchronously (a member just joined as a learner must refuse at once), and polled with the leader otherwise.
import type { Metadata } from '@grpc/grpc-js';
import type { IncomingHttpHeaders } from 'node:http2';
import type { Logger } from 'pino';
import { etcdError } from '../../kv/errors.js';
import { first } from '../grpc/fast-unary.js';
import type { EtcdError } from '../../kv/errors.js';
import type { StoreApi } from '../member/store-api.js';

/** etcd's maxNoLeaderCnt: election timeouts without a leader before leader-requiring streams are canceled. */
export const MAX_NO_LEADER_COUNT = 3;

export interface LeaderGuardOptions {
  /** How often the leader is polled (etcd: one election timeout, 1000 ms by default). */
  readonly electionTimeoutMs?: number;
  readonly logger?: Logger;
}

export function requiresLeader(md: Metadata): boolean {
  return md.get('hasleader')[0] === 'true';
}

/** The same, as the headers of a call the client port serves itself carry it. */
export function headersRequireLeader(headers: IncomingHttpHeaders): boolean {
  return first(headers.hasleader) === 'true';
}

export class LeaderGuard {
  private readonly streams = new Set<(err: EtcdError) => void>();
  private readonly timer: NodeJS.Timeout;
  private readonly log: Logger | undefined;
  private noLeaderCount = 0;
  private learner = false;
  private polling = false;

  constructor(
    private readonly store: StoreApi,
    opts: LeaderGuardOptions = {},
  ) {
    this.log = opts.logger;
    this.timer = setInterval(() => void this.poll(), opts.electionTimeoutMs ?? 1000);
    this.timer.unref();
    void this.poll();
  }

  /** Whether this member is a learner: asked of the store when it can tell now, else as of the last poll. */
  get isLearner(): boolean {
    return this.store.isLearner?.() ?? this.learner;
  }

  /** Throws NO_LEADER while the member knows of no leader (asked of the store now, not polled). */
  async requireLeader(): Promise<void> {
    const st = await this.store.status();
    if (st.leader === '0' || st.leader === '') throw etcdError('NO_LEADER');
  }

  /** Tracks a leader-requiring stream until the returned function is called; `cancel` ends it with NO_LEADER. */
  track(cancel: (err: EtcdError) => void): () => void {
    this.streams.add(cancel);
    return () => this.streams.delete(cancel);
  }

  close(): void {
    clearInterval(this.timer);
    this.streams.clear();
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const st = await this.store.status();
      this.learner = st.isLearner;
      this.noLeaderCount = st.leader === '0' || st.leader === '' ? this.noLeaderCount + 1 : 0;
    } catch (e) {
      this.log?.debug({ err: e }, 'status poll failed');
    } finally {
      this.polling = false;
    }
    if (this.noLeaderCount >= MAX_NO_LEADER_COUNT && this.streams.size > 0) {
      this.log?.warn({ streams: this.streams.size }, 'no leader for too long; canceling streams that require one');
      const cancels = [...this.streams];
      this.streams.clear();
      for (const cancel of cancels) cancel(etcdError('NO_LEADER'));
    }
  }
}
