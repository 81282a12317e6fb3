// Loads proto/etcd (etcdserverpb, mvccpb, authpb, grpc.health.v1) into gRPC service definitions. Decoding
// keeps every field present (proto3 defaults), 64-bit integers as decimal strings so ids stay exact, enums
// as their names and oneofs named by a virtual field — the shapes src/server/v3rpc/etcd-wire.ts describes.
// Each decoded request remembers its serialized size, which the edge checks against MaxRequestBytes. KV
// requests get back one thing decoding loses: whether an empty range_end was sent (v3rpc/range-end-presence.ts).
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { etcdPackageDefinition } from '../../etcd-proto/package-definition.js';
import { markEmptyRangeEnds } from './range-end-presence.js';

export const ETCD_SERVICES = ['KV', 'Watch', 'Lease', 'Cluster', 'Maintenance', 'Auth'] as const;
export type EtcdServiceName = (typeof ETCD_SERVICES)[number];

const WIRE_SIZE = Symbol('wireSize');

/** Counts bytes as they cross the wire (for etcd_network_client_grpc_*_bytes_total). */
export interface ByteCounters {
  received(n: number): void;
  sent(n: number): void;
}

/** The serialized size of a request decoded by these definitions (0 for anything else). */
export function wireSize(req: unknown): number {
  if (typeof req !== 'object' || req === null) return 0;
  return (req as { [WIRE_SIZE]?: number })[WIRE_SIZE] ?? 0;
}

function isMethod(v: unknown): v is MethodDefinition<object, object> {
  return typeof v === 'object' && v !== null && 'requestDeserialize' in v && 'path' in v;
}

/** A service definition whose codecs record request sizes and count bytes. */
function instrumented(fullName: string, counters: ByteCounters | undefined): ServiceDefinition {
  const def = etcdPackageDefinition()[fullName];
  if (typeof def !== 'object' || def === null || 'format' in def) throw new Error(`${fullName} is not a service`);
  const out: Record<string, MethodDefinition<object, object>> = {};
  const kv = fullName === 'etcdserverpb.KV';
  for (const [name, m] of Object.entries(def)) {
    if (!isMethod(m)) continue;
    out[name] = {
      ...m,
      requestDeserialize: (buf: Buffer) => {
        counters?.received(buf.length);
        const req = m.requestDeserialize(buf);
        if (kv) markEmptyRangeEnds(name, buf, req);
        Object.defineProperty(req, WIRE_SIZE, { value: buf.length, enumerable: false });
        return req;
      },
      // A Buffer is a response encoded already (the Watch service encodes its own: v3rpc/watch-encode.ts).
      responseSerialize: (res: object) => {
        const buf = Buffer.isBuffer(res) ? res : m.responseSerialize(res);
        counters?.sent(buf.length);
        return buf;
      },
    };
  }
  return out;
}

export function etcdServiceDefinition(name: EtcdServiceName, counters?: ByteCounters): ServiceDefinition {
  return instrumented(`etcdserverpb.${name}`, counters);
}

export function healthServiceDefinition(counters?: ByteCounters): ServiceDefinition {
  return instrumented('grpc.health.v1.Health', counters);
}

/** The raw definitions (tests build clients from them). */
export { etcdPackageDefinition };
