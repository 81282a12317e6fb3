// A real etcd 3.4 (the Debian package) on free loopback ports in a temp dir: the reference that the
// differential tests run the same etcdctl commands against.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../jepsen-lite/src/ports.js';
import { waitFor } from './client-port-harness.js';

export interface ReferenceEtcd {
  readonly endpoint: string;
  readonly log: () => string;
  stop(): Promise<void>;
}

async function healthy(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/health`);
    return res.status === 200 && (await res.text()).includes('"true"');
  } catch {
    return false;
  }
}

interface MemberSpec {
  readonly name: string;
  readonly endpoint: string;
  readonly peer: string;
}

async function spec(name: string): Promise<MemberSpec> {
  return { name, endpoint: `http://127.0.0.1:${await freePort()}`, peer: `http://127.0.0.1:${await freePort()}` };
}

export async function startReferenceEtcd(extraArgs: readonly string[] = []): Promise<ReferenceEtcd> {
  const me = await spec('ref');
  return startMember(me, `ref=${me.peer}`, extraArgs);
}

/**
 * A one-member etcd on a data directory that `prepare` makes first (`etcdctl snapshot restore`), given the
 * member's name, peer URL and initial cluster, which a restore bakes into the data.
 */
export async function startReferenceEtcdOn(prepare: (me: { name: string; peer: string; initialCluster: string }) => Promise<string>): Promise<ReferenceEtcd> {
  const me = await spec('ref');
  const initialCluster = `ref=${me.peer}`;
  const dataDir = await prepare({ name: me.name, peer: me.peer, initialCluster });
  // A later --data-dir wins over startMember's own.
  return startMember(me, initialCluster, ['--data-dir', dataDir]);
}

/**
 * A real etcd that has lost its leader: a two-member cluster whose second member is stopped once both
 * are up, leaving the first without a quorum (and so, after an election timeout, without a leader).
 */
export async function startLeaderlessEtcd(): Promise<ReferenceEtcd> {
  const [a, b] = [await spec('a'), await spec('b')];
  const cluster = `a=${a.peer},b=${b.peer}`;
  // Neither serves clients before the cluster has a leader, so both start before either is awaited.
  const [ma, mb] = await Promise.all([startMember(a, cluster), startMember(b, cluster)]);
  await mb.stop();
  try {
    await waitFor(async () => !(await healthy(ma.endpoint)), 'the remaining member to lose its leader', 30_000);
  } catch (e) {
    await ma.stop();
    throw e;
  }
  return ma;
}

async function startMember(me: MemberSpec, initialCluster: string, extraArgs: readonly string[] = []): Promise<ReferenceEtcd> {
  const dir = await mkdtemp(join(tmpdir(), 'setpoint-etcd-ref-'));
  const { endpoint, peer } = me;
  let output = '';
  const child: ChildProcess = spawn(
    'etcd',
    [
      '--name', me.name,
      '--data-dir', join(dir, 'data'),
      '--listen-client-urls', endpoint,
      '--advertise-client-urls', endpoint,
      '--listen-peer-urls', peer,
      '--initial-advertise-peer-urls', peer,
      '--initial-cluster', initialCluster,
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`etcd exited early:\n${output}`);
      return healthy(endpoint);
    }, 'reference etcd to become healthy', 30_000);
  } catch (e) {
    await stop();
    throw e;
  }
  return { endpoint, log: () => output, stop };
}
