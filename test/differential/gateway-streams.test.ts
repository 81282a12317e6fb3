// The JSON gateway's streams beyond watch and keep-alive, side by side with a one-member etcd 3.4: the
// snapshot as grpc-gateway streams it (a {"result":…} line per message, the blob in base64, the sha256
// last), whose bytes `etcdctl snapshot status` reads and `etcdctl snapshot restore` turns into a data
// directory a real etcd serves.
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBoth } from '../../src/harness/store-cluster.js';
import type { StoreCluster } from '../../src/harness/store-cluster.js';
import { etcdctl } from '../../src/harness/etcdctl.js';
import { startReferenceEtcdOn } from '../server/helpers/etcd-reference.js';
import type { ReferenceEtcd } from '../server/helpers/etcd-reference.js';
import { suiteClusters } from '../helpers/suite-clusters.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

async function post(base: string, path: string, body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(base + path, { method: 'POST', body });
  return { status: res.status, text: await res.text() };
}

interface SnapshotAnswer {
  /** What is the same on both: the status, the line shapes, where the sha256 is and that it matches. */
  readonly shape: unknown;
  readonly bytes: Buffer;
}

/** Takes a snapshot through the gateway, reading the response as it streams. */
async function snapshot(base: string): Promise<SnapshotAnswer> {
  const res = await fetch(base + '/v3/maintenance/snapshot', { method: 'POST', body: '{}' });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const blobs: Buffer[] = [];
  const keys = new Set<string>();
  let buf = '';
  let lines = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += Buffer.from(value).toString('utf8');
    let at: number;
    while ((at = buf.indexOf('\n')) >= 0) {
      const line = JSON.parse(buf.slice(0, at)) as Record<string, Record<string, string>>;
      buf = buf.slice(at + 1);
      lines++;
      for (const [k, v] of Object.entries(line)) for (const f of Object.keys(v)) keys.add(`${k}.${f}`);
      blobs.push(Buffer.from(line['result']?.['blob'] ?? '', 'base64'));
    }
  }
  const bytes = Buffer.concat(blobs);
  const db = bytes.subarray(0, bytes.length - 32);
  const sha = bytes.subarray(bytes.length - 32);
  return {
    shape: {
      status: res.status,
      type: res.headers.get('content-type'),
      // remaining_bytes counts differently (Setpoint does not know the total up front); it is there or not.
      fields: [...keys].filter((k) => k !== 'result.remaining_bytes').sort(),
      manyLines: lines > 2,
      trailing: buf,
      lastIsSha: blobs.at(-1)?.length === 32 && createHash('sha256').update(db).digest().equals(sha),
      aligned: db.length % 512 === 0,
    },
    bytes,
  };
}

describe('the JSON gateway streams as etcd 3.4 does', () => {
  const clusters = suiteClusters();
  let etcd: StoreCluster | undefined;
  let setpoint: StoreCluster | undefined;
  let restored: ReferenceEtcd | undefined;
  let dir = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'setpoint-gateway-streams-'));
    const both = await startBoth({ size: 1, token: 'gateway-streams', label: 'setpoint-gateway-streams-' });
    etcd = clusters.track(both.etcd);
    setpoint = clusters.track(both.setpoint);
  }, 60_000);

  afterAll(async () => {
    await restored?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('/v3/maintenance/snapshot: the same stream; its bytes restore into an etcd with the same keys', async () => {
    if (!etcd || !setpoint) throw new Error('clusters did not start');
    const theirs = etcd.endpoints()[0] as string;
    const ours = setpoint.endpoints()[0] as string;
    for (const base of [theirs, ours]) {
      // A value over one 32 KiB message, so the snapshot takes several.
      for (let i = 0; i < 5; i++) await post(base, '/v3/kv/put', JSON.stringify({ key: b64(`snap/${i}`), value: b64(String(i).repeat(20_000)) }));
      await post(base, '/v3/kv/deleterange', JSON.stringify({ key: b64('snap/4') }));
    }
    const [a, b] = await Promise.all([snapshot(theirs), snapshot(ours)]);
    expect(b.shape).toEqual(a.shape);
    expect(a.shape).toMatchObject({ status: 200, manyLines: true, lastIsSha: true });

    // The same request errors: malformed JSON, another method.
    for (const body of ['{"x":', '[1]']) expect(await post(ours, '/v3/maintenance/snapshot', body)).toEqual(await post(theirs, '/v3/maintenance/snapshot', body));
    const get = async (base: string): Promise<number> => (await fetch(base + '/v3/maintenance/snapshot')).status;
    expect(await get(ours)).toBe(await get(theirs));

    // Saved as etcdctl snapshot save saves it (the sha256 included), read back by etcdctl.
    const file = join(dir, 'gateway.db');
    await writeFile(file, b.bytes);
    const status = await etcdctl(ours, ['snapshot', 'status', file, '-w', 'json']);
    expect(status.code, status.stderr).toBe(0);
    const live = async (ep: string): Promise<unknown> => {
      const r = await etcdctl(ep, ['get', 'snap/', '--prefix', '-w', 'json']);
      const out = JSON.parse(r.stdout) as { header: { revision: number }; kvs: unknown[] };
      return { revision: out.header.revision, kvs: out.kvs };
    };
    const want = await live(theirs);
    expect((JSON.parse(status.stdout) as { revision: number }).revision).toBe((want as { revision: number }).revision);
    restored = await startReferenceEtcdOn(async (me) => {
      const dataDir = join(dir, 'restored');
      const r = await etcdctl(ours, ['snapshot', 'restore', file, '--name', me.name, '--initial-cluster', me.initialCluster, '--initial-advertise-peer-urls', me.peer, '--data-dir', dataDir]);
      expect(r.code, r.stderr).toBe(0);
      return dataDir;
    });
    expect(await live(restored.endpoint)).toEqual(want);
  }, 60_000);
});
