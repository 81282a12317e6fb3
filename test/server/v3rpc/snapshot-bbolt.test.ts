// Maintenance.Snapshot sends etcd's own format (src/kv/etcd-snapshot.ts): what `etcdctl snapshot save`
// gets from Setpoint, `etcdctl snapshot status` reads and `etcdctl snapshot restore` turns into a data
// directory that a real etcd 3.4 starts on, with the same keys, values, revisions, leases and compaction.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixturePort } from '../helpers/client-port-harness.js';
import type { FixturePort } from '../helpers/client-port-harness.js';
import { startReferenceEtcdOn } from '../helpers/etcd-reference.js';
import type { ReferenceEtcd } from '../helpers/etcd-reference.js';
import { etcdctl } from '../../../src/harness/etcdctl.js';

interface JsonKv {
  readonly key: string;
  readonly value?: string;
  readonly create_revision: number;
  readonly mod_revision: number;
  readonly version: number;
  readonly lease?: number;
}

async function ok(endpoint: string, args: readonly string[]): Promise<string> {
  const r = await etcdctl(endpoint, args);
  // etcdctl logs progress on stderr (snapshot save, restore): the exit code is the verdict.
  expect(r.code, `etcdctl ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

async function everything(endpoint: string): Promise<{ revision: number; kvs: JsonKv[] }> {
  const out = JSON.parse(await ok(endpoint, ['get', '', '--from-key', '-w', 'json'])) as { header: { revision: number }; kvs?: JsonKv[] };
  return { revision: out.header.revision, kvs: out.kvs ?? [] };
}

describe('snapshots in etcd format', () => {
  let fx: FixturePort | undefined;
  let etcd: ReferenceEtcd | undefined;
  let dir = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'setpoint-snap-bbolt-'));
    fx = await startFixturePort();
  });

  afterAll(async () => {
    await etcd?.stop();
    await fx?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('saves a file etcdctl can read and etcd restores and serves', async () => {
    const ep = (fx as FixturePort).endpoint;
    await ok(ep, ['put', 'a', '1']);
    await ok(ep, ['put', 'b', '2']);
    await ok(ep, ['put', 'a', '3']);
    await ok(ep, ['del', 'b']);
    await ok(ep, ['compact', '3']);
    const lease = /lease ([0-9a-f]+) granted/.exec(await ok(ep, ['lease', 'grant', '300']))?.[1] as string;
    await ok(ep, ['put', 'c', 'with lease', `--lease=${lease}`]);
    // Enough keys and a large enough value for branch pages and a value spanning several pages.
    for (let i = 0; i < 40; i++) await ok(ep, ['put', `many/${String(i).padStart(3, '0')}`, 'x'.repeat(400)]);
    await ok(ep, ['put', 'big', 'y'.repeat(20_000)]);
    const before = await everything(ep);

    const file = join(dir, 's.db');
    expect(await ok(ep, ['snapshot', 'save', file])).toContain('Snapshot saved');
    const status = JSON.parse(await ok(ep, ['snapshot', 'status', file, '-w', 'json'])) as { revision: number; totalKey: number; totalSize: number };
    expect(status.revision).toBe(before.revision);
    expect(status.totalKey).toBeGreaterThan(before.kvs.length);

    etcd = await startReferenceEtcdOn(async (me) => {
      const dataDir = join(dir, 'restored');
      const r = await etcdctl(ep, ['snapshot', 'restore', file, '--name', me.name, '--initial-cluster', me.initialCluster, '--initial-advertise-peer-urls', me.peer, '--data-dir', dataDir]);
      expect(r.code, r.stderr).toBe(0);
      return dataDir;
    });
    const after = await everything(etcd.endpoint);
    expect(after.kvs).toEqual(before.kvs);
    expect(after.revision).toBe(before.revision);
    // The compaction came along: revision 2 is gone; at 3 (the put of b) a was still 1.
    const compacted = await etcdctl(etcd.endpoint, ['get', 'a', '--rev=2']);
    expect(compacted.stderr).toContain('required revision has been compacted');
    expect(await ok(etcd.endpoint, ['get', 'a', '--rev=3', '--print-value-only'])).toBe('1\n');
    // And the lease, with the key attached to it.
    const ttl = await ok(etcd.endpoint, ['lease', 'timetolive', lease, '--keys']);
    expect(ttl).toContain(`lease ${lease} granted with TTL(300s)`);
    expect(ttl).toContain('attached keys([c])');
  });
});
