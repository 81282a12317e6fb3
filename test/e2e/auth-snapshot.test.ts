// Auth in etcd-format snapshot files, both ways, against a real etcd 3.4. The same etcdctl session (users
// with passwords and one without, roles with key, range, prefix and from-key permissions, a deleted user,
// auth enabled) runs on a Setpoint member and on an etcd member; their `etcdctl snapshot save` files hold
// the same auth buckets, byte for byte once the bcrypt salts are masked. Setpoint's file, restored with
// `etcdctl snapshot restore`, starts an etcd that answers the user, role and permission questions as
// Setpoint did, with the same passwords. etcd's file, restored with `setpoint snapshot restore` into three
// members, gives a cluster whose every member answers them as etcd did, and whose own snapshot carries
// etcd's auth buckets unchanged (the hashes included). Both files pass `etcdctl snapshot status`; a file
// with a malformed auth record is refused in words and leaves no directory behind.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BoltReader } from '../../src/kv/bolt-reader.js';
import { BoltWriter } from '../../src/kv/bolt-writer.js';
import { etcdctl } from '../../src/harness/etcdctl.js';
import { setpointMain } from '../../src/harness/setpoint-main.js';
import { StoreCluster } from '../../src/harness/store-cluster.js';
import type { StoreProgram } from '../../src/harness/kinds/store-member.js';

const ROOT = ['--user', 'root:rootpw'];
const ALICE = ['--user', 'alice:alicepw'];
const AUTH_BUCKETS = ['auth', 'authRoles', 'authUsers'] as const;

/** The session, run on both programs: every kind of permission, a user without password, a deleted user. */
const SESSION: readonly (readonly string[])[] = [
  ['user', 'add', 'root', '--new-user-password=rootpw', '--interactive=false'],
  ['user', 'grant-role', 'root', 'root'],
  ['role', 'add', 'docs'],
  ['role', 'grant-permission', 'docs', '--prefix', 'readwrite', '/docs/'],
  ['role', 'grant-permission', 'docs', 'read', '/motd'],
  ['role', 'grant-permission', 'docs', 'write', '/drop'],
  ['role', 'add', 'reader'],
  ['role', 'grant-permission', 'reader', 'read', '/a', '/c'],
  ['role', 'grant-permission', 'reader', '--from-key', 'read', '/z'],
  ['user', 'add', 'alice', '--new-user-password=alicepw', '--interactive=false'],
  ['user', 'grant-role', 'alice', 'docs'],
  ['user', 'grant-role', 'alice', 'reader'],
  ['user', 'add', 'bob', '--no-password', '--interactive=false'],
  ['user', 'grant-role', 'bob', 'reader'],
  ['user', 'add', 'carol', '--new-user-password=carolpw', '--interactive=false'],
  ['user', 'delete', 'carol'],
  ['put', '/motd', 'hello'],
  ['put', '/docs/1', 'one'],
  ['put', '/b', 'bee'],
  ['auth', 'enable'],
];

/** What a cluster answers about its auth state, and what each user may do (nothing here writes). */
const QUESTIONS: readonly (readonly string[])[] = [
  [...ROOT, 'user', 'list'],
  [...ROOT, 'role', 'list'],
  [...ROOT, 'user', 'get', 'root'],
  [...ROOT, 'user', 'get', 'alice'],
  [...ROOT, 'user', 'get', 'bob'],
  [...ROOT, 'user', 'get', 'carol'],
  [...ROOT, 'role', 'get', 'docs'],
  [...ROOT, 'role', 'get', 'reader'],
  [...ROOT, 'get', '', '--from-key'],
  ['get', '/motd'],
  ['--user', 'alice:wrong', 'get', '/motd'],
  ['--user', 'bob:anything', 'get', '/b'],
  ['--user', 'carol:carolpw', 'get', '/motd'],
  [...ALICE, 'get', '/motd'],
  [...ALICE, 'get', '/docs/', '--prefix'],
  [...ALICE, 'get', '/b'],
  [...ALICE, 'get', '/secret'],
  [...ALICE, 'put', '/motd', 'changed'],
  [...ALICE, 'user', 'list'],
];

async function answers(endpoint: string): Promise<string[]> {
  const out: string[] = [];
  for (const q of QUESTIONS) {
    const r = await etcdctl(endpoint, q);
    const errors = r.stderr.split('\n').filter((l) => l.startsWith('Error'));
    out.push(`${q.join(' ')} → ${r.code}\n${r.stdout}${errors.join('\n')}`);
  }
  return out;
}

async function ok(endpoint: string, args: readonly string[]): Promise<string> {
  const r = await etcdctl(endpoint, args);
  expect(r.code, `etcdctl ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** The auth buckets of a snapshot file (its trailing sha256 left out), each as [key, value] in hex. */
function authBuckets(file: string, maskSalts: boolean): Record<string, [string, string][]> {
  const bolt = BoltReader.open(file, statSync(file).size - 32);
  try {
    const out: Record<string, [string, string][]> = {};
    for (const b of AUTH_BUCKETS) {
      out[b] = [...bolt.bucket(b)].map(([k, v]) => {
        // A bcrypt hash is 60 bytes: masking it keeps every length in the record as it was.
        const value = maskSalts ? Buffer.from(v.toString('latin1').replace(/\$2a\$04\$[./A-Za-z0-9]{53}/g, 'H'.repeat(60)), 'latin1') : v;
        return [k.toString('hex'), value.toString('hex')];
      });
    }
    return out;
  } finally {
    bolt.close();
  }
}

function setpointRestore(file: string, args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [setpointMain(), 'snapshot', 'restore', file, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('auth in etcd-format snapshot files', () => {
  let dir: string;
  const clusters: StoreCluster[] = [];
  const files: Record<'setpoint' | 'etcd', string> = { setpoint: '', etcd: '' };
  const asked: Record<'setpoint' | 'etcd', string[]> = { setpoint: [], etcd: [] };

  async function cluster(program: StoreProgram, names: readonly string[], token?: string): Promise<StoreCluster> {
    const c = await StoreCluster.create({ program, size: names.length, names, flags: ['--bcrypt-cost=4'], label: `setpoint-authsnap-${program}-`, ...(token ? { token } : {}) });
    clusters.push(c);
    return c;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'setpoint-authsnap-'));
    for (const program of ['setpoint', 'etcd'] as const) {
      const c = await cluster(program, ['a1']);
      await c.startFounders('ready');
      const ep = c.clientUrl('a1');
      for (const step of SESSION) await ok(ep, step);
      files[program] = join(dir, `${program}.db`);
      expect(await ok(ep, [...ROOT, 'snapshot', 'save', files[program]])).toContain('Snapshot saved');
      asked[program] = await answers(ep);
      await c.destroy();
    }
  }, 180_000);

  afterAll(async () => {
    for (const c of clusters) await c.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('writes the auth buckets as etcd does, and etcdctl snapshot status reads both files', async () => {
    expect(asked.setpoint).toEqual(asked.etcd);
    const ours = authBuckets(files.setpoint, true);
    expect(ours.authUsers?.map(([k]) => Buffer.from(k, 'hex').toString())).toEqual(['alice', 'bob', 'root']);
    expect(ours).toEqual(authBuckets(files.etcd, true));
    for (const file of Object.values(files)) {
      const st = JSON.parse(await ok('', ['snapshot', 'status', file, '-w', 'json'])) as { totalKey: number };
      expect(st.totalKey).toBeGreaterThan(0);
    }
  });

  it("restores Setpoint's file into an etcd 3.4 with the same users, roles, permissions and passwords", async () => {
    const etcd = await cluster('etcd', ['r1']);
    const dataDir = join(dir, 'etcd-restored');
    await ok('', ['snapshot', 'restore', files.setpoint, '--name', 'r1', '--initial-cluster', etcd.foundersCluster(), '--initial-advertise-peer-urls', etcd.peerUrl('r1'), '--data-dir', dataDir]);
    etcd.get('r1').flags.push('--data-dir', dataDir);
    // 'ready' reads without a user, which auth refuses: a leader is what a restored member needs.
    await etcd.startFounders('leader');
    expect(await answers(etcd.clientUrl('r1'))).toEqual(asked.setpoint);
    await etcd.destroy();
  }, 120_000);

  it("restores etcd's file into three Setpoint members, each with etcd's auth state", async () => {
    const names = ['s1', 's2', 's3'];
    const sp = await cluster('setpoint', names, 'auth-from-etcd');
    for (const name of names) {
      const r = setpointRestore(files.etcd, [
        `--name=${name}`,
        `--data-dir=${sp.dataDirOf(name)}`,
        `--initial-cluster=${sp.foundersCluster()}`,
        '--initial-cluster-token=auth-from-etcd',
        `--initial-advertise-peer-urls=${sp.peerUrl(name)}`,
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/\nauth: 3 users, 2 roles, auth enabled, auth revision \d+\n/);
    }
    await sp.startFounders('leader');
    for (const name of names) expect(await answers(sp.clientUrl(name)), name).toEqual(asked.etcd);
    // Its own snapshot carries etcd's auth buckets as they were: enabled flag, revision, hashes.
    const again = join(dir, 'again.db');
    await ok(sp.clientUrl('s2'), [...ROOT, 'snapshot', 'save', again]);
    expect(authBuckets(again, false)).toEqual(authBuckets(files.etcd, false));
    await ok('', ['snapshot', 'status', again]);
    // And the members go on from there: a write by alice, an auth change by root.
    await ok(sp.clientUrl('s3'), [...ALICE, 'put', '/docs/2', 'two']);
    await ok(sp.clientUrl('s1'), [...ROOT, 'role', 'revoke-permission', 'docs', '/docs/', '--prefix']);
    const denied = await etcdctl(sp.clientUrl('s2'), [...ALICE, 'get', '/docs/2']);
    expect(denied.stderr).toContain('etcdserver: permission denied');
    await sp.destroy();
  }, 180_000);

  it('refuses a file with a malformed auth record, in words, leaving nothing behind', async () => {
    const cases: Record<string, { bucket: string; entries: [Buffer, Buffer][]; error: string }> = {
      garbage: { bucket: 'authUsers', entries: [[Buffer.from('alice'), Buffer.from([0x0a, 0x7f])]], error: 'authUsers "alice": not a protobuf message' },
      name: { bucket: 'authUsers', entries: [[Buffer.from('alice'), Buffer.from([0x0a, 0x03, 0x62, 0x6f, 0x62, 0x22, 0x02, 0x08, 0x01])]], error: 'authUsers "alice": the record\'s name is "bob"' },
      perm: { bucket: 'authRoles', entries: [[Buffer.from('r'), Buffer.from([0x0a, 0x01, 0x72, 0x12, 0x04, 0x08, 0x07, 0x12, 0x00])]], error: 'authRoles "r" permission 0: type 7 is not READ, WRITE or READWRITE' },
      revision: { bucket: 'auth', entries: [[Buffer.from('authRevision'), Buffer.from([0, 1])]], error: 'auth authRevision: 2 bytes, not 8' },
    };
    for (const [name, c] of Object.entries(cases)) {
      const file = join(dir, `malformed-${name}.db`);
      await writeBoltFile(file, { key: [], meta: [[Buffer.from('consistent_index'), Buffer.alloc(8)]], [c.bucket]: c.entries });
      const target = join(dir, `malformed-${name}`);
      const r = setpointRestore(file, ['--name=m1', '--initial-cluster=m1=http://127.0.0.1:2380', '--initial-advertise-peer-urls=http://127.0.0.1:2380', `--data-dir=${target}`]);
      expect([r.code, r.stderr.trim()], name).toEqual([1, expect.stringContaining(`Error: ${file}: ${c.error}`)]);
      expect(existsSync(target), name).toBe(false);
    }
    expect(readdirSync(dir).filter((n) => n.includes('restoring'))).toEqual([]);
  }, 60_000);
});

/** A bbolt file of the given buckets followed by its sha256, as `etcdctl snapshot save` writes one. */
async function writeBoltFile(file: string, buckets: Record<string, [Buffer, Buffer][]>): Promise<void> {
  const fh = await open(`${file}.tmp`, 'w+');
  let size: number;
  try {
    const bolt = new BoltWriter(fh);
    for (const [name, entries] of Object.entries(buckets)) await bolt.bucket(name, entries);
    size = await bolt.finish();
  } finally {
    await fh.close();
  }
  const db = readFileSync(`${file}.tmp`).subarray(0, size);
  rmSync(`${file}.tmp`);
  writeFileSync(file, Buffer.concat([db, createHash('sha256').update(db).digest()]));
}
