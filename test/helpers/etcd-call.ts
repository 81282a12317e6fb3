// One etcd v3 unary call over gRPC, with the project's protos, its own connection, optional client TLS and
// metadata: the response, or the error as "<code> <details>" (what tests compare between etcd and Setpoint);
// and the users the auth e2e tests start from.
import { readFileSync } from 'node:fs';
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import type { MethodDefinition, ServiceError } from '@grpc/grpc-js';
import { etcdPackageDefinition } from '../../src/server/v3rpc/etcd-proto.js';
import type { TlsFiles } from '../../src/harness/tls-files.js';
import { etcdctl } from '../../src/harness/etcdctl.js';
import type { StoreCluster } from '../../src/harness/store-cluster.js';

type Method = MethodDefinition<object, object>;

export function etcdCall(url: string, service: string, name: string, req: object, opts: { tls?: TlsFiles; metadata?: Record<string, string> } = {}): Promise<object | string> {
  const m = (etcdPackageDefinition()[`etcdserverpb.${service}`] as unknown as Record<string, Method> | undefined)?.[name];
  if (!m) throw new Error(`etcdserverpb.${service}/${name} is not in proto/etcd`);
  const t = opts.tls;
  const creds = t ? credentials.createSsl(readFileSync(t.caFile), readFileSync(t.keyFile), readFileSync(t.certFile)) : credentials.createInsecure();
  const client = new Client(url.replace(/^https?:\/\//, ''), creds);
  const metadata = new Metadata();
  for (const [k, v] of Object.entries(opts.metadata ?? {})) metadata.set(k, v);
  return new Promise((resolve) => {
    client.makeUnaryRequest(m.path, m.requestSerialize, m.responseDeserialize, req, metadata, { deadline: Date.now() + 20_000 }, (e: ServiceError | null, res?: object) => {
      client.close();
      resolve(e ? `${e.code} ${e.details}` : (res as object));
    });
  });
}

/** A Range of one key: its values joined by commas, or the error. */
export async function etcdGet(url: string, key: string, opts: { tls?: TlsFiles; metadata?: Record<string, string> } = {}): Promise<string> {
  const r = await etcdCall(url, 'KV', 'Range', { key: Buffer.from(key) }, opts);
  return typeof r === 'string' ? r : (r as { kvs: { value: Buffer }[] }).kvs.map((kv) => Buffer.from(kv.value).toString()).join(',');
}

/**
 * The users both auth e2e tests start from, made with etcdctl and auth then enabled: root (root role, password
 * rootpw) and alice (password alicepw, may read k), and k = v.
 */
export async function setUpRootAndAlice(c: StoreCluster, tls?: TlsFiles): Promise<void> {
  for (const args of [
    ['user', 'add', 'root', '--new-user-password=rootpw', '--interactive=false'],
    ['user', 'grant-role', 'root', 'root'],
    ['user', 'add', 'alice', '--new-user-password=alicepw', '--interactive=false'],
    ['role', 'add', 'reader'],
    ['role', 'grant-permission', 'reader', 'read', 'k'],
    ['user', 'grant-role', 'alice', 'reader'],
    ['put', 'k', 'v'],
    ['auth', 'enable'],
  ]) {
    const r = await etcdctl(c.endpoints(), args, tls ? { tls } : {});
    if (r.code !== 0) throw new Error(`etcdctl ${args.join(' ')} on ${c.program}: ${r.stderr}`);
  }
}
