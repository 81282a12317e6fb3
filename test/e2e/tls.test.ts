// A three-member store with TLS everywhere, started with etcd's TLS flags: clients and peers both need
// certificates signed by the cluster's CA (--client-cert-auth, --peer-client-cert-auth). Certificates are
// made at run time (src/harness/tls-files.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdctl } from '../../src/harness/etcdctl.js';
import { StoreCluster } from '../../src/harness/store-cluster.js';
import { issueCert, makeCa } from '../../src/harness/tls-files.js';
import type { TlsFiles } from '../../src/harness/tls-files.js';
import { suiteClusters } from '../helpers/suite-clusters.js';

describe('TLS for clients and peers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'setpoint-tls-'));
  const clusters = suiteClusters();
  let cluster: StoreCluster | undefined;
  let client: TlsFiles;

  const ctl = async (args: string[], withCert = true): Promise<{ ok: boolean; out: string }> => {
    if (!cluster) throw new Error('no cluster');
    // Without a certificate the handshake fails and etcdctl retries until its command timeout: keep it short.
    const r = withCert
      ? await etcdctl(cluster.endpoints(), args, { tls: client, flags: ['--dial-timeout=5s', '--command-timeout=20s'] })
      : await etcdctl(cluster.endpoints(), args, { flags: [`--cacert=${client.caFile}`, '--dial-timeout=5s', '--command-timeout=4s'] });
    return r.code === 0 ? { ok: true, out: r.stdout } : { ok: false, out: `${r.stdout}${r.stderr}` };
  };

  beforeAll(async () => {
    const ca = makeCa(dir, 'setpoint-test-ca');
    const member = issueCert(dir, 'member', ca);
    client = issueCert(dir, 'client', ca);
    // Ready: every member answers a linearizable read over TLS (a leader exists and peers talk over TLS).
    cluster = clusters.track(await StoreCluster.start({ program: 'setpoint', names: ['a', 'b', 'c'], tls: member, clientTls: client, peerTls: member, env: { NODE_NO_WARNINGS: '1' } }));
  }, 90_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves etcdctl with a client certificate, and every member agrees', async () => {
    expect((await ctl(['put', 'k', 'v'])).out.trim()).toBe('OK');
    expect((await ctl(['get', 'k', '--print-value-only'])).out.trim()).toBe('v');
    const list = (await ctl(['member', 'list'])).out.trim().split('\n');
    expect(list).toHaveLength(3);
    for (const line of list) expect(line).toMatch(/, started, [abc], https:\/\/127\.0\.0\.1:\d+, https:\/\/127\.0\.0\.1:\d+, false$/);
    const hashes = new Set((await ctl(['endpoint', 'hashkv', '--cluster'])).out.trim().split('\n').map((l) => l.split(', ')[1]));
    expect(hashes.size).toBe(1);
  });

  it('refuses a client without a certificate', async () => {
    const r = await ctl(['get', 'k'], false);
    expect(r.ok).toBe(false);
  });
});
