// etcdctl lock's algorithm (clientv3/concurrency Session + Mutex), written against the raw API: a
// session lease kept alive every TTL/3, a key `<prefix>/<lease hex>` created under the lease, and a
// queue by create_revision — wait until every key created before ours has been deleted.
import type { EtcdClient } from '../etcd-client.js';

export class LeaseSession {
  private timer: NodeJS.Timeout | undefined;
  private stream: ReturnType<EtcdClient['keepAliveStream']> | undefined;
  /** False once a keepalive answered TTL 0 or the stream broke: the holder's own view of its lease. */
  alive = true;

  private constructor(
    private readonly client: EtcdClient,
    readonly lease: string,
    ttlSeconds: number,
  ) {
    const s = client.keepAliveStream();
    this.stream = s;
    s.on('data', (r: { TTL: string }) => {
      if (Number(r.TTL) <= 0) this.alive = false;
    });
    s.on('error', () => (this.alive = false));
    s.on('end', () => (this.alive = false));
    const send = (): void => {
      if (!s.writableEnded) s.write({ ID: lease });
    };
    send();
    this.timer = setInterval(send, (ttlSeconds * 1000) / 3);
  }

  static async open(client: EtcdClient, ttlSeconds: number, timeoutMs: number): Promise<LeaseSession> {
    const lease = await client.leaseGrant(ttlSeconds, timeoutMs);
    return new LeaseSession(client, lease, ttlSeconds);
  }

  async close(timeoutMs: number): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stream?.on('error', () => {});
    this.stream?.cancel();
    this.stream = undefined;
    await this.client.leaseRevoke(this.lease, timeoutMs).catch(() => {});
  }
}

/** Waits until `key` is deleted (a DELETE event at or after `fromRev`), or rejects at the deadline. */
function waitDelete(client: EtcdClient, key: string, fromRev: number, deadline: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = client.watchStream(true);
    const done = (e?: Error): void => {
      clearTimeout(t);
      s.removeAllListeners('data');
      s.on('error', () => {});
      s.cancel();
      if (e) reject(e);
      else resolve();
    };
    const t = setTimeout(() => done(new Error('lock wait timed out')), Math.max(0, deadline - Date.now()));
    s.on('data', (r: { canceled: boolean; cancel_reason: string; events: { type: string }[] }) => {
      if (r.canceled) done(new Error(`lock wait canceled: ${r.cancel_reason}`));
      else if (r.events.some((e) => e.type === 'DELETE')) done();
    });
    s.on('error', (e: Error) => done(e));
    s.write({ create_request: { key: Buffer.from(key), start_revision: String(fromRev) } });
  });
}

/** Acquires the mutex; returns the lock key and its create revision (the fencing token). */
export async function acquireLock(client: EtcdClient, prefix: string, s: LeaseSession, timeoutMs: number, deadline: number): Promise<{ key: string; rev: number }> {
  const myKey = `${prefix}${BigInt(s.lease).toString(16)}`;
  const t = await client.txn(
    [{ key: myKey, target: 'CREATE', result: 'EQUAL', rev: 0 }],
    [{ put: { key: myKey, value: '', lease: s.lease } }],
    [{ range: { key: myKey } }],
    timeoutMs,
  );
  const myRev = t.succeeded ? t.revision : (t.ranges[0]?.[0]?.createRevision ?? 0);
  if (myRev === 0) throw new Error('lock key vanished');
  for (;;) {
    if (Date.now() > deadline) throw new Error('lock wait timed out');
    const r = await client.range(prefix, { prefix: true, maxCreateRevision: myRev - 1, sort: { order: 'DESCEND', target: 'CREATE' }, limit: 1 }, timeoutMs);
    const ahead = r.kvs[0];
    if (!ahead) break;
    await waitDelete(client, ahead.key, r.revision + 1, deadline);
  }
  // clientv3 re-reads its own key: if the session expired while waiting, the lock is not held.
  const mine = await client.range(myKey, {}, timeoutMs);
  if (mine.kvs.length === 0) throw new Error('session expired while waiting');
  return { key: myKey, rev: myRev };
}

