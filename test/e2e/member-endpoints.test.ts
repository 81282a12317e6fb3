// `setpoint server --api-server-endpoints` (dist/: build first): the member's scheduler and controller
// manager get a kubeconfig naming every API server, the member's own first. One member (a one-member
// store) plus a second `setpoint apiserver` on its store with its CA; SIGKILL the member's own API server
// component: the scheduler logs the switch to the other one and keeps its Lease (same holder, renewals go
// on), without losing leadership.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCertDirCa } from '../../src/apiserver/pki/cert-dir.js';
import { issueClientCert } from '../../src/apiserver/pki/certificates.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { loadKubeconfig } from '../../src/client/kubeconfig.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { LEASES } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import { freePorts } from '../../src/harness/free-port.js';
import { apiServerKind, readyz } from '../../src/harness/kinds/apiserver.js';
import { ManagedProcess } from '../../src/harness/managed-process.js';
import { startProcess } from '../../src/harness/process-kind.js';
import { serverMemberArgs } from '../../src/harness/server-members.js';
import { waitFor } from '../../src/harness/wait.js';

type Lease = KubeObject & { spec?: { holderIdentity?: string; renewTime?: string } };

describe('setpoint server --api-server-endpoints', () => {
  let dir: string;
  let member: ManagedProcess | undefined;
  let other: ManagedProcess | undefined;
  let rest: RestClient | undefined;
  let ports: { client: number; peer: number; api: number; other: number };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'member-endpoints-'));
    ports = await freePorts(['client', 'peer', 'api', 'other'] as const);
    const own = `https://127.0.0.1:${ports.api}`;
    const second = `https://127.0.0.1:${ports.other}`;
    member = new ManagedProcess(
      'setpoint server m1',
      {
        bin: process.execPath,
        args: [
          ...serverMemberArgs(dir, 'm1', ports, `m1=http://127.0.0.1:${ports.peer}`),
          // The other server first: the member puts its own first anyway.
          `--api-server-endpoints=${second},${own}`,
          // Generous timing, so a renewal lost with the dying server leaves time for the next.
          '--leader-elect-lease-duration=15s',
          '--leader-elect-renew-deadline=10s',
          '--leader-elect-retry-period=1s',
        ],
        env: { SETPOINT_LOG_FORMAT: 'json' },
      },
      { logFile: join(dir, 'm1.log'), capture: true },
    );
    member.start();
    await member.waitReady('its loops to start', () => `${member?.stdout ?? ''}${member?.stderr ?? ''}`.includes('control-plane member running'), 180_000);
    ({ process: other } = await startProcess(apiServerKind, { etcdServers: [`http://127.0.0.1:${ports.client}`], certDir: join(dir, 'pki') }, { name: 'apiserver-2', dir, ports: { secure: ports.other }, timeoutMs: 90_000 }));
    const ca = readCertDirCa(join(dir, 'pki'));
    const admin = await issueClientCert(ca, { user: 'admin', groups: ['system:masters'] });
    rest = new RestClient({ server: second, tls: { ca: ca.certPem, cert: admin.certPem, key: admin.keyPem } });
  }, 240_000);

  afterAll(async () => {
    rest?.close();
    const pid = member?.pid;
    if (pid !== undefined) for (const c of childPids(pid)) process.kill(c, 'SIGKILL');
    await member?.kill('SIGKILL');
    await other?.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("gives the loops every API server, its own first, and they carry on when the member's own dies", async () => {
    const own = `https://127.0.0.1:${ports.api}`;
    const second = `https://127.0.0.1:${ports.other}`;
    for (const f of ['scheduler.kubeconfig', 'controller-manager.kubeconfig']) {
      expect(loadKubeconfig({ path: join(dir, 'm1', 'kubeconfigs', f) }).config).toMatchObject({ server: own, endpoints: [second] });
    }
    const leases = new ResourceClient<Lease>(rest!, LEASES);
    const lease = (): Promise<Lease> => leases.get('kube-system', 'kube-scheduler');
    const holder = await waitFor('the scheduler to lead', async () => (await lease().catch(() => undefined))?.spec?.holderIdentity, { timeoutMs: 60_000 });

    const apiserver = childPids(member!.pid!).find((p) => cmdline(p).includes('\0apiserver\0'));
    expect(apiserver, 'the member runs an apiserver component').toBeDefined();
    process.kill(apiserver!, 'SIGKILL');
    await waitFor('the scheduler to switch to the other API server', () => member!.stdout.split('\n').some((l) => l.startsWith('scheduler ') && l.includes('switching to the next endpoint') && l.includes(second)), { timeoutMs: 30_000 });
    let last = (await lease()).spec?.renewTime ?? '';
    for (let i = 0; i < 2; i++) {
      const prev = last;
      last = await waitFor(`renewal ${i + 1} after the kill`, async () => {
        const l = await lease();
        expect(l.spec?.holderIdentity).toBe(holder);
        const t = l.spec?.renewTime ?? '';
        return t > prev ? t : undefined;
      }, { timeoutMs: 30_000 });
    }
    expect(member!.stdout).not.toContain('leaderelection lost');
    // The member's own API server is restarted by its supervisor meanwhile.
    await waitFor('the restarted API server', async () => (await readyz(ports.api, readCertDirCa(join(dir, 'pki')).certPem)) === 200, { timeoutMs: 60_000 });
  }, 180_000);
});

function childPids(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter((s) => s !== '').map(Number);
  } catch {
    return [];
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}
