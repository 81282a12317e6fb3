// The client over TLS with a CA and a client certificate (the API server's --etcd-cafile, --etcd-certfile,
// --etcd-keyfile) against etcd 3.4 and Setpoint's store serving clients with --client-cert-auth.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EtcdClient } from '../../src/etcd-client/etcd-client.js';
import { EtcdClientError } from '../../src/etcd-client/errors.js';
import { makeTlsFiles } from '../../src/harness/tls-files.js';
import { STORE_KINDS, StoreTestCluster } from './helpers/store-cluster.js';

const dir = mkdtempSync(join(tmpdir(), 'setpoint-apistore-tls-'));
const cert = makeTlsFiles(dir, 'member');
const other = makeTlsFiles(dir, 'stranger');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(STORE_KINDS)('etcd client over TLS on %s', (kind) => {
  it('talks to a store that requires client certificates, and only with one its CA signed', async () => {
    const cluster = await StoreTestCluster.start(kind, { tls: cert });
    try {
      const c = cluster.client();
      await c.put('tls/k', 'v');
      expect((await c.get('tls/k'))?.value.toString()).toBe('v');
      const w = c.watch('tls/', { prefix: true, startRevision: 1 });
      for await (const b of w) {
        expect(b.events[0]?.kv.key.toString()).toBe('tls/k');
        break;
      }

      for (const tls of [{ caFile: cert.caFile }, { caFile: cert.caFile, certFile: other.certFile, keyFile: other.keyFile }]) {
        const refused = new EtcdClient({ endpoints: cluster.endpoints(), tls, callTimeoutMs: 2000 });
        try {
          const e = await refused.get('tls/k').then(() => undefined, (x: unknown) => x);
          expect(e).toBeInstanceOf(EtcdClientError);
          expect(['ETCD_UNAVAILABLE', 'ETCD_DEADLINE_EXCEEDED']).toContain((e as EtcdClientError).code);
        } finally {
          refused.close();
        }
      }
    } finally {
      await cluster.stop();
    }
  });
});
