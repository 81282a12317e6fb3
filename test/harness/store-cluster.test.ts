// The harness's store clusters and process kinds against real etcd 3.4 (the e2e and differential suites
// run Setpoint's): a kind started on its own, a cluster's readiness, pause and restart, certificates that
// etcd accepts, and a start that fails saying why, leaving nothing behind.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { liveChildren } from '../../src/harness/children.js';
import { etcdctl } from '../../src/harness/etcdctl.js';
import { freePorts } from '../../src/harness/free-port.js';
import { etcdMember } from '../../src/harness/kinds/store-member.js';
import type { StoreMemberSpec } from '../../src/harness/kinds/store-member.js';
import { startProcess } from '../../src/harness/process-kind.js';
import { StoreCluster } from '../../src/harness/store-cluster.js';
import { makeTlsFiles } from '../../src/harness/tls-files.js';
import { waitFor } from '../../src/harness/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'setpoint-harness-'));
const clusters: StoreCluster[] = [];
afterEach(async () => {
  for (const c of clusters.splice(0)) await c.destroy();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cluster(o: Omit<Parameters<typeof StoreCluster.start>[0], 'program'> = {}): Promise<StoreCluster> {
  const c = await StoreCluster.start({ program: 'etcd', ...o });
  clusters.push(c);
  return c;
}

describe('process kinds', () => {
  it('starts one process of a kind and waits until it serves', async () => {
    // A member names its own peer URL in --initial-cluster: here the caller chooses the ports first.
    const ports = await freePorts(['client', 'peer'] as const);
    const spec: StoreMemberSpec = { name: 'solo', dataDir: join(dir, 'solo'), initialCluster: `solo=http://127.0.0.1:${ports.peer}`, state: 'new', token: 'kind-test' };
    const { process: p } = await startProcess(etcdMember, spec, { name: 'solo', dir, ports });
    try {
      expect((await etcdctl(`http://127.0.0.1:${ports.client}`, ['put', 'k', 'v'])).stdout).toBe('OK\n');
      expect(p.logSince()).toContain('"msg":"serving');
    } finally {
      await p.kill('SIGKILL');
    }
  });
});

describe('a store cluster', () => {
  it('is ready when every member answers a linearizable read; a paused member misses writes and catches up after SIGCONT', async () => {
    const c = await cluster();
    expect(c.running()).toEqual(['n1', 'n2', 'n3']);
    const leader = await c.waitForLeader();
    const follower = c.running().find((n) => n !== leader) as string;
    c.pause(follower);
    expect((await c.ctl(['put', 'while-paused', 'x'], [leader])).code).toBe(0);
    c.resume(follower);
    await c.waitCaughtUp(follower);
    const { byMember } = await c.hashes();
    expect(new Set([...byMember.values()].map((h) => h.hash)).size).toBe(1);
  });

  it('kills and restarts a member on its data dir, with the same id', async () => {
    const c = await cluster({ size: 1 });
    const id = c.idOf('n1');
    expect(await c.kill('n1', 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(c.running()).toEqual([]);
    await c.restart('n1', { wait: 'ready' });
    expect((await c.status('n1')).memberId).toBe(id);
    expect(c.hasData('n1')).toBe(true);
  });

  it('serves TLS with the certificates the harness makes, and refuses a client without one', async () => {
    const tls = makeTlsFiles(dir, 'harness-tls');
    const cert = new X509Certificate(readFileSync(tls.certFile));
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.verify(new X509Certificate(readFileSync(tls.caFile)).publicKey)).toBe(true);
    const c = await cluster({ size: 1, tls, peerTls: tls });
    expect(c.clientUrl('n1')).toMatch(/^https:/);
    expect((await c.ctl(['put', 'secure', 'yes'])).stdout).toBe('OK\n');
    const bare = await etcdctl(c.endpoints(), ['get', 'secure'], { flags: [`--cacert=${tls.caFile}`, '--command-timeout=2s'] });
    expect(bare.code).not.toBe(0);
  });

  it('fails a start with the member\'s own words, and leaves no process or directory behind', async () => {
    const before = liveChildren();
    // A later flag wins: the member advertises a peer URL its --initial-cluster does not name, and says so.
    const flags = ['--initial-advertise-peer-urls=http://127.0.0.1:1'];
    const err = await StoreCluster.start({ program: 'etcd', size: 1, flags, baseDir: dir, label: 'doomed-' }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/n1 exited \(\d+\) before serving:[\s\S]*missing from --initial-advertise-peer-urls/);
    await waitFor('no child left', () => liveChildren() === before);
    expect(readdirSync(dir).filter((f) => f.startsWith('doomed-'))).toEqual([]);
  });
});

