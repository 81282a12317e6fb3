// proto/etcd (etcdserverpb, mvccpb, authpb, grpc.health.v1) loaded once for both sides of the wire: the
// store's gRPC services and the control plane's etcd client decode the same way — every field present
// (proto3 defaults), 64-bit integers as decimal strings so ids stay exact, enums as their names, oneofs
// named by a virtual field.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';

/** proto/etcd, found by walking up from this module (it runs from src/ under vitest and dist/src/ when built). */
function protoDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (let dir = here; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'proto', 'etcd', 'rpc.proto'))) return join(dir, 'proto', 'etcd');
    if (dirname(dir) === dir) throw new Error(`no proto/etcd/rpc.proto in any folder above ${here}`);
  }
}

let loaded: protoLoader.PackageDefinition | undefined;

/** The definitions, shared and read-only: wrap a method's codecs in a copy, never in place. */
export function etcdPackageDefinition(): protoLoader.PackageDefinition {
  loaded ??= protoLoader.loadSync(['rpc.proto', 'health.proto'], {
    includeDirs: [protoDir()],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return loaded;
}
