// Moving a cluster's data from etcd to Setpoint: a real etcd 3.4 with 10,000 keys, overwrites, deletes (single
// and ranged), leases with keys attached and a compaction, saved with `etcdctl snapshot save`; the file is
// restored once per member with `setpoint snapshot restore` and etcdctl's restore flags, three Setpoint members
// start on the directories, and every member answers as etcd did: `get --prefix -w json` (revisions, versions,
// leases included; only the header's cluster, member and term differ), reads at an old revision, a read and a
// watch below the compacted revision (etcd's error), a watch from an old revision (the same events, in
// order), the leases and their keys. Then the refusals, as etcdctl words them: an existing data dir, a file
// without its hash, a hash that does not match, a damaged database, a name not in --initial-cluster; none
// leaves a directory behind.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdClient } from '../../src/etcd-client/etcd-client.js';
import { CtlProcess, etcdctl } from '../../src/harness/etcdctl.js';
import { setpointMain } from '../../src/harness/setpoint-main.js';
import { StoreCluster } from '../../src/harness/store-cluster.js';

const KEYS = 10_000;
const key = (i: number): string => `k/${String(i).padStart(5, '0')}`;

function restore(file: string, args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [setpointMain(), 'snapshot', 'restore', file, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** etcdctl's JSON with what differs between two clusters by nature (ids, term) taken out. */
function normalized(json: string): unknown {
  const v = JSON.parse(json) as { header?: Record<string, unknown> };
  if (v.header) v.header = { revision: v.header.revision };
  return v;
}

describe('an etcd 3.4 snapshot restored into a Setpoint cluster', () => {
  let dir: string;
  let etcd: StoreCluster;
  let setpoint: StoreCluster | undefined;
  let snapshot: string;
  let compactRev = 0;
  let midRev = 0;
  let leaseIds: string[] = [];
  const etcdAnswers = new Map<string, string>();

  /** The questions each cluster is asked; etcd's answers are kept before it stops. */
  const questions: Record<string, readonly string[]> = {
    all: ['get', '--prefix', '', '-w', 'json'],
    keysOnly: ['get', '--prefix', 'k/', '--keys-only', '--limit', '50'],
    leased: ['get', '--prefix', 'leased/', '-w', 'json'],
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcd-snapshot-import-'));
    etcd = await StoreCluster.start({ program: 'etcd', size: 1, names: ['e1'] });
    const c = new EtcdClient({ endpoints: etcd.endpoints(), callTimeoutMs: 30_000 });
    try {
      // 10,000 keys in transactions of 100 puts (etcd's --max-txn-ops is 128).
      for (let b = 0; b < KEYS / 100; b++) {
        await c.txn({ compare: [], success: Array.from({ length: 100 }, (_, j) => ({ put: { key: key(b * 100 + j), value: `v1-${b * 100 + j}` } })) });
      }
      for (let i = 0; i < KEYS; i += 37) await c.put(key(i), `v2-${i}`);
      midRev = (await c.put('marker', 'before-compaction')).revision;
      for (let i = 5; i < KEYS; i += 101) await c.deleteRange(key(i));
      await c.deleteRange('k/099', { rangeEnd: 'k/09a' });
      compactRev = (await c.put('marker', 'compacted-here')).revision;
      await c.compact(compactRev, { physical: true });
      for (const ttl of [600, 900, 1200]) {
        const l = await c.leaseGrant(ttl);
        leaseIds.push(l.id);
        for (let j = 0; j < 10; j++) await c.put(`leased/${ttl}/${j}`, `lease-${ttl}`, { lease: l.id });
      }
      for (let i = 1; i < KEYS; i += 997) await c.put(key(i), `v3-${i}`);
      await c.deleteRange(key(2));
    } finally {
      c.close();
    }
    leaseIds = leaseIds.sort();
    snapshot = join(dir, 'etcd.db');
    const saved = await etcdctl(etcd.endpoints(), ['snapshot', 'save', snapshot]);
    expect(saved.code, saved.stderr).toBe(0);
    for (const [name, args] of Object.entries(questions)) {
      const r = await etcdctl(etcd.endpoints(), args);
      expect(r.code, r.stderr).toBe(0);
      etcdAnswers.set(name, r.stdout);
    }
    for (const [name, args] of Object.entries(await revQuestions())) {
      const r = await etcdctl(etcd.endpoints(), args);
      etcdAnswers.set(name, `${r.code} ${r.stdout} ${r.stderr.split('\n').filter((l) => l.startsWith('Error')).join('\n')}`);
    }
    etcdAnswers.set('watch', await watchFrom(etcd.endpoints(), compactRev + 1));
    etcdAnswers.set('compactedWatch', await compactedWatch(etcd.endpoints()));
    etcdAnswers.set('leases', await leaseAnswers(etcd.endpoints()));
    if (process.env.SHOW_ETCD_ANSWERS) for (const [k, v] of etcdAnswers) if (k !== 'all') console.log(k, v.slice(0, 400));
    await etcd.destroy();
  }, 300_000);

  afterAll(async () => {
    await setpoint?.destroy();
    await etcd?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  async function revQuestions(): Promise<Record<string, readonly string[]>> {
    return {
      atCompacted: ['get', '--prefix', 'k/000', '--rev', String(compactRev), '-w', 'json'],
      afterCompacted: ['get', '--prefix', 'k/', '--rev', String(compactRev + 20), '--limit', '30', '-w', 'json'],
      belowCompacted: ['get', 'marker', '--rev', String(midRev)],
      compactAgain: ['compaction', String(midRev)],
    };
  }

  /** Every event from `rev` to the head, as etcdctl prints them. */
  async function watchFrom(endpoints: readonly string[], rev: number): Promise<string> {
    const w = new CtlProcess(endpoints, ['watch', '--prefix', '', `--rev=${rev}`, '--prev-kv']);
    // The last write is the delete of k/00002: its DELETE, key and (with --prev-kv) the previous key and value.
    const done = (): boolean => w.stdout.includes(`DELETE\n${key(2)}\n\n${key(2)}\n`);
    for (let i = 0; i < 200 && !done() && !w.exited; i++) await w.waitLines(w.lines + 1, 100);
    const r = await w.stop();
    return r.stdout;
  }

  async function compactedWatch(endpoints: readonly string[]): Promise<string> {
    const w = new CtlProcess(endpoints, ['watch', 'marker', `--rev=${midRev}`]);
    await w.waitLines(1, 10_000);
    const r = await w.stop();
    return `${r.stdout}${r.stderr.split('\n').filter((l) => l.startsWith('watch was canceled') || l.startsWith('Error')).join('\n')}`;
  }

  async function leaseAnswers(endpoints: readonly string[]): Promise<string> {
    const out: string[] = [];
    const list = await etcdctl(endpoints, ['lease', 'list']);
    out.push(list.stdout.split('\n').sort().join('\n'));
    for (const id of leaseIds) {
      const ttl = await etcdctl(endpoints, ['lease', 'timetolive', BigInt(id).toString(16), '--keys', '-w', 'json']);
      const v = JSON.parse(ttl.stdout) as { id: number; 'granted-ttl': number; keys: string[] };
      const keys = v.keys.map((k) => Buffer.from(k, 'base64').toString()).sort();
      out.push(`${BigInt(id).toString(16)} granted ${v['granted-ttl']} keys ${keys.join(',')}`);
    }
    return out.join('\n');
  }

  it('restores the file into three members that answer as etcd did', async () => {
    const names = ['s1', 's2', 's3'];
    setpoint = await StoreCluster.create({ program: 'setpoint', size: 3, names, token: 'moved-from-etcd' });
    for (const name of names) {
      const r = restore(snapshot, [
        `--name=${name}`,
        `--data-dir=${setpoint.dataDirOf(name)}`,
        `--initial-cluster=${setpoint.foundersCluster()}`,
        '--initial-cluster-token=moved-from-etcd',
        `--initial-advertise-peer-urls=${setpoint.peerUrl(name)}`,
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/restored snapshot: revision \d+, compacted revision \d+, \d+ keys \(\d+ revisions\), 3 leases, hash verified; member [0-9a-f]{16} of cluster [0-9a-f]{16}/);
    }
    await setpoint.startFounders('ready');
    // What etcd answered is worth comparing against: history, a compacted watch, leases with keys.
    expect((etcdAnswers.get('watch') as string).split('\n').length).toBeGreaterThan(100);
    expect(etcdAnswers.get('compactedWatch')).toContain('required revision has been compacted');
    expect(etcdAnswers.get('belowCompacted')).toContain('required revision has been compacted');
    expect(etcdAnswers.get('atCompacted')).toContain('"count":');
    expect(etcdAnswers.get('leases')).toMatch(/granted 600 keys leased\/600\/0,/);
    const all = JSON.parse(etcdAnswers.get('all') as string) as { kvs: unknown[]; header: { revision: number } };
    expect(all.kvs.length).toBeGreaterThan(9000);
    for (const name of names) {
      const ep = [setpoint.clientUrl(name)];
      for (const [q, args] of Object.entries(questions)) {
        const r = await etcdctl(ep, args);
        expect(r.code, r.stderr).toBe(0);
        if (args.includes('json')) expect(normalized(r.stdout), `${name}: ${q}`).toEqual(normalized(etcdAnswers.get(q) as string));
        else expect(r.stdout, `${name}: ${q}`).toBe(etcdAnswers.get(q));
      }
      for (const [q, args] of Object.entries(await revQuestions())) {
        const r = await etcdctl(ep, args);
        const got = `${r.code} ${r.stdout} ${r.stderr.split('\n').filter((l) => l.startsWith('Error')).join('\n')}`;
        if (args.includes('json')) {
          const [code, ...rest] = got.split(' ');
          const [ecode, ...erest] = (etcdAnswers.get(q) as string).split(' ');
          expect(code).toBe(ecode);
          expect(normalized(rest.join(' ')), `${name}: ${q}`).toEqual(normalized(erest.join(' ')));
        } else expect(got, `${name}: ${q}`).toBe(etcdAnswers.get(q));
      }
      expect(await leaseAnswers(ep), `${name}: leases`).toBe(etcdAnswers.get('leases'));
    }
    // Watches (on one member: the others hold the same history, checked above through reads).
    const ep = [setpoint.clientUrl('s2')];
    expect(await watchFrom(ep, compactRev + 1)).toBe(etcdAnswers.get('watch'));
    expect(await compactedWatch(ep)).toBe(etcdAnswers.get('compactedWatch'));
    // The cluster goes on from etcd's revision: the next write is the one after it.
    const put = await etcdctl(ep, ['put', 'after', 'restore', '-w', 'json']);
    expect((JSON.parse(put.stdout) as { header: { revision: number } }).header.revision).toBe(all.header.revision + 1);
  }, 300_000);

  it('refuses what etcdctl refuses, in its words, and leaves nothing behind', () => {
    const base = ['--name=m1', '--initial-cluster=m1=http://127.0.0.1:2380', '--initial-advertise-peer-urls=http://127.0.0.1:2380'];
    const target = join(dir, 'refused');
    // An existing data dir.
    const exists = join(dir, 'exists');
    expect(restore(snapshot, [...base, `--data-dir=${exists}`]).code).toBe(0);
    let r = restore(snapshot, [...base, `--data-dir=${exists}`]);
    expect([r.code, r.stderr.trim()]).toEqual([1, `Error: data-dir "${exists}" exists`]);
    // No hash (a file cut to a whole number of pages).
    const bytes = readFileSync(snapshot);
    const cut = join(dir, 'cut.db');
    writeFileSync(cut, bytes.subarray(0, bytes.length - 32));
    r = restore(cut, [...base, `--data-dir=${target}`]);
    expect([r.code, r.stderr.trim()]).toEqual([1, 'Error: snapshot missing hash but --skip-hash-check=false']);
    // A hash that does not match.
    const flipped = Buffer.from(bytes);
    flipped[5000] = (flipped[5000] as number) ^ 0xff;
    const bad = join(dir, 'bad.db');
    writeFileSync(bad, flipped);
    r = restore(bad, [...base, `--data-dir=${target}`]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^Error: expected sha256 \[[\d ]+\], got \[[\d ]+\]$/);
    // Damaged meta pages, hash check skipped: a clear error, not a crash.
    const damaged = Buffer.from(bytes);
    damaged.fill(0, 0, 8192);
    const dmg = join(dir, 'damaged.db');
    writeFileSync(dmg, damaged);
    r = restore(dmg, [...base, `--data-dir=${target}`, '--skip-hash-check']);
    expect([r.code, r.stderr.trim()]).toEqual([1, `Error: ${dmg}: not a readable bbolt database: no valid meta page (bad magic, version or checksum)`]);
    // A name the initial cluster does not list.
    r = restore(snapshot, ['--name=m9', '--initial-cluster=m1=http://127.0.0.1:2380', `--data-dir=${target}`]);
    expect([r.code, r.stderr.trim()]).toEqual([1, 'Error: couldn\'t find local name "m9" in the initial cluster configuration']);
    r = restore(snapshot, ['--name=m1', '--initial-cluster=m1=http://127.0.0.1:2380', `--data-dir=${target}`]);
    expect([r.code, r.stderr.trim()]).toEqual([
      1,
      'Error: --initial-cluster has m1=http://127.0.0.1:2380 but missing from --initial-advertise-peer-urls=http://localhost:2380 (resolved urls: "http://localhost:2380" != "http://127.0.0.1:2380")',
    ]);
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(dir).filter((n) => n.includes('restoring'))).toEqual([]);
  }, 120_000);
});
