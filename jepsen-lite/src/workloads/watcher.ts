// One watcher of the watch workload: a raw gRPC Watch stream on the prefix with prev_kv, that asks for
// progress every second, and on any break — error, cancel, a member that loses its leader (hasleader),
// or a stream silent for too long (a paused member) — reconnects to the next member and resumes from
// its last event's revision + 1. Every response is logged, so the checker can test atomicity.
import type { Cluster } from '../cluster.js';
import { EtcdClient, prefixEnd, type WireKv, type WireWatchResponse } from '../etcd-client.js';
import type { History } from '../history.js';

export interface WatchedKv {
  value: string;
  create: number;
  mod: number;
  version: number;
}

export interface WatchEvent {
  rev: number;
  type: 'PUT' | 'DELETE';
  key: string;
  value: string;
  create: number;
  version: number;
  prev: WatchedKv | null;
  /** Index of the response (within this watcher's life) that carried it. */
  resp: number;
  /** Index of the stream (connection) that carried it. */
  stream: number;
}

export interface WatcherLog {
  id: number;
  startRev: number;
  events: WatchEvent[];
  /** Progress notifications: stream index and revision. */
  progress: { stream: number; rev: number; time: number; resp: number }[];
  reconnects: { time: number; node: number; reason: string }[];
  lastRev: number;
  progressRev: number;
}

function watched(kv: WireKv | null): WatchedKv | null {
  if (!kv || kv.key.length === 0) return null;
  return { value: kv.value.toString(), create: Number(kv.create_revision), mod: Number(kv.mod_revision), version: Number(kv.version) };
}

export class Watcher {
  readonly log: WatcherLog;
  private resp = 0;
  private streamNo = 0;
  private stopped = false;
  private wake: (() => void) | undefined;

  constructor(
    readonly id: number,
    private readonly prefix: string,
    startRev: number,
    private readonly cluster: Cluster,
    private readonly history: History,
    private readonly preferred: number,
    private readonly requireLeader: boolean,
  ) {
    this.log = { id, startRev, events: [], progress: [], reconnects: [], lastRev: startRev - 1, progressRev: 0 };
  }

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  async run(): Promise<void> {
    let node = this.preferred;
    while (!this.stopped) {
      const slots = this.cluster.slots;
      for (let d = 0; d < slots.length; d++) {
        const s = slots[(node + d) % slots.length]!;
        if (s.member) {
          node = s.index;
          break;
        }
      }
      const reason = await this.stream(node);
      if (this.stopped) break;
      this.log.reconnects.push({ time: this.history.now(), node, reason });
      node = (node + 1) % this.cluster.slots.length;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** One stream's life; resolves with why it ended. */
  private stream(node: number): Promise<string> {
    const client = new EtcdClient(this.cluster.endpoint(node));
    const stream = client.watchStream(this.requireLeader);
    const streamNo = this.streamNo++;
    let lastHeard = Date.now();
    return new Promise<string>((resolve) => {
      let done = false;
      const finish = (why: string): void => {
        if (done) return;
        done = true;
        clearInterval(timer);
        this.wake = undefined;
        stream.removeAllListeners('data');
        stream.on('error', () => {});
        stream.cancel();
        client.close();
        resolve(why);
      };
      this.wake = () => finish('stopped');
      const timer = setInterval(() => {
        if (Date.now() - lastHeard > 4000) finish('silent for 4 s');
        else stream.write({ progress_request: {} });
      }, 1000);
      stream.on('data', (r: WireWatchResponse) => {
        lastHeard = Date.now();
        if (r.created) {
          if (r.canceled) finish(`create refused: ${r.cancel_reason}`);
          return;
        }
        if (r.canceled) {
          finish(r.compact_revision !== '0' ? `compacted at ${r.compact_revision}` : `canceled: ${r.cancel_reason}`);
          return;
        }
        const respNo = this.resp++;
        if (r.events.length === 0) {
          const rev = Number(r.header?.revision ?? 0);
          this.log.progress.push({ stream: streamNo, rev, time: this.history.now(), resp: respNo });
          this.log.progressRev = Math.max(this.log.progressRev, rev);
          return;
        }
        for (const e of r.events) {
          const kv = e.kv;
          if (!kv) continue;
          const rev = Number(kv.mod_revision);
          this.log.events.push({
            rev,
            type: e.type,
            key: kv.key.toString(),
            value: kv.value.toString(),
            create: Number(kv.create_revision),
            version: Number(kv.version),
            prev: watched(e.prev_kv),
            resp: respNo,
            stream: streamNo,
          });
          this.log.lastRev = Math.max(this.log.lastRev, rev);
        }
      });
      stream.on('error', (e: Error) => finish(`error: ${e.message.split('\n')[0]}`));
      stream.on('end', () => finish('stream ended'));
      stream.write({
        create_request: {
          key: Buffer.from(this.prefix),
          range_end: prefixEnd(this.prefix),
          start_revision: String(this.log.lastRev + 1),
          prev_kv: true,
          progress_notify: true,
        },
      });
    });
  }
}
