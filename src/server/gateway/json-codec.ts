// The JSON form of etcd's messages as etcd 3.4's grpc-gateway (jsonpb with OrigName) writes and reads it:
// fields by their .proto names (either the .proto or the lowerCamel name is accepted on the way in),
// bytes as base64, 64-bit integers as decimal strings, enums by name, proto3 defaults omitted, unknown
// fields ignored. Messages cross as protobuf bytes, so the gateway runs the same codecs as gRPC.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/** A request body that is not the message it should be (a gRPC InvalidArgument at the gateway). */
export class JsonBodyError extends Error {
  override readonly name = 'JsonBodyError';
}

let root: protobuf.Root | undefined;

function etcdRoot(): protobuf.Root {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'proto', 'etcd', 'rpc.proto'))) {
    if (dirname(dir) === dir) throw new Error('no proto/etcd/rpc.proto above the gateway');
    dir = dirname(dir);
  }
  const protoDir = join(dir, 'proto', 'etcd');
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => join(protoDir, target.replace(/^.*[\\/]/, ''));
  r.loadSync('rpc.proto', { keepCase: true });
  r.resolveAll();
  root = r;
  return r;
}

/** A message type by its full name (etcdserverpb.RangeRequest). */
export function messageType(fullName: string): protobuf.Type {
  return etcdRoot().lookupType(fullName);
}

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

function fieldByJsonKey(type: protobuf.Type, key: string): protobuf.Field | undefined {
  const byName = type.fields[key];
  if (byName) return byName;
  return type.fieldsArray.find((f) => lowerCamel(f.name) === key);
}

function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v;
}

function scalarFromJson(f: protobuf.Field, v: unknown): unknown {
  const t = f.type;
  if (f.resolvedType instanceof protobuf.Type) return objectFromJson(f.resolvedType, v);
  if (f.resolvedType instanceof protobuf.Enum) {
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    if (typeof v === 'string' && v in f.resolvedType.values) return v;
    throw new JsonBodyError(`unknown value ${JSON.stringify(v)} for enum ${f.resolvedType.name}`);
  }
  if (t === 'bytes') {
    if (typeof v !== 'string') throw new JsonBodyError(`json: cannot unmarshal ${describe(v)} into Go value of type []uint8`);
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(v)) throw new JsonBodyError(`illegal base64 data at input byte 0`);
    return Buffer.from(v, v.includes('-') || v.includes('_') ? 'base64url' : 'base64');
  }
  if (t === 'bool') {
    if (typeof v !== 'boolean') throw new JsonBodyError(`json: cannot unmarshal ${describe(v)} into Go value of type bool`);
    return v;
  }
  if (t === 'string') {
    if (typeof v !== 'string') throw new JsonBodyError(`json: cannot unmarshal ${describe(v)} into Go value of type string`);
    return v;
  }
  // Numbers: JSON numbers or decimal strings, as jsonpb accepts them.
  const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v : undefined;
  if (s === undefined || !/^-?\d+$/.test(s)) throw new JsonBodyError(`json: cannot unmarshal ${describe(v)} into Go value of type ${t}`);
  if (LONG_TYPES.has(t)) return s;
  return Number(s);
}

function objectFromJson(type: protobuf.Type, json: unknown): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    // jsonpb reads every message into a map of raw fields first, and so names that map.
    throw new JsonBodyError(`json: cannot unmarshal ${describe(json)} into Go value of type map[string]json.RawMessage`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(json)) {
    const f = fieldByJsonKey(type, key);
    // jsonpb as grpc-gateway configures it ignores unknown fields; null is an absent field.
    if (!f || v === null) continue;
    if (f.repeated) {
      if (!Array.isArray(v)) throw new JsonBodyError(`json: cannot unmarshal ${describe(v)} into Go value of type []${f.type}`);
      out[f.name] = v.map((e) => scalarFromJson(f, e));
    } else {
      out[f.name] = scalarFromJson(f, v);
    }
  }
  return out;
}

/** A parsed JSON value as the protobuf bytes of `type` (JsonBodyError if it does not fit). */
export function encodeFromJson(type: protobuf.Type, json: unknown): Buffer {
  const obj = objectFromJson(type, json);
  return Buffer.from(type.encode(type.fromObject(obj)).finish());
}

function isDefault(f: protobuf.Field, v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (f.repeated) return Array.isArray(v) && v.length === 0;
  if (f.resolvedType instanceof protobuf.Type) return false;
  if (f.resolvedType instanceof protobuf.Enum) return v === 0 || f.resolvedType.values[String(v)] === 0;
  return v === '' || v === 0 || v === '0' || v === false;
}

function prune(type: protobuf.Type, obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Field number order, as Go's generated structs list them.
  for (const f of [...type.fieldsArray].sort((a, b) => a.id - b.id)) {
    const v = obj[f.name];
    if (isDefault(f, v)) continue;
    if (f.resolvedType instanceof protobuf.Type) {
      const sub = f.resolvedType;
      out[f.name] = f.repeated ? (v as Record<string, unknown>[]).map((e) => prune(sub, e)) : prune(sub, v as Record<string, unknown>);
    } else {
      out[f.name] = v;
    }
  }
  return out;
}

/** Protobuf bytes of `type` as jsonpb (OrigName, no defaults) writes them. */
export function jsonFromEncoded(type: protobuf.Type, bytes: Uint8Array): Record<string, unknown> {
  const msg = type.decode(bytes);
  const obj = type.toObject(msg, { longs: String, enums: String, bytes: String });
  return prune(type, obj);
}
