// Request bodies in Kubernetes' protobuf encoding, for the kinds kubectl's typed generators send that way
// (`kubectl create configmap|secret|deployment`): the `k8s\0` magic, a runtime.Unknown carrying the
// TypeMeta and the object's bytes, decoded with proto/kubernetes/objects.proto into the JSON shape the
// rest of the registry takes (Time as RFC 3339, IntOrString and Quantity as their JSON forms, bytes as
// base64). Other kinds keep answering 415; answers are always JSON.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { GroupVersionKind } from '../../api/schema/schema.js';
import { StatusError, statuses } from '../status.js';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** The four bytes before every Kubernetes protobuf object: `k8s\0`. */
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Which messages the registry decodes, by group/version/kind. */
const MESSAGES: Readonly<Record<string, string>> = {
  '/v1/ConfigMap': 'ConfigMap',
  '/v1/Secret': 'Secret',
  'apps/v1/Deployment': 'Deployment',
};

let root: protobuf.Root | undefined;

/** proto/kubernetes, found by walking up from this module (src/ under vitest, dist/src/ when built). */
function protoRoot(): protobuf.Root {
  if (root) return root;
  const here = dirname(fileURLToPath(import.meta.url));
  for (let dir = here; ; dir = dirname(dir)) {
    const file = join(dir, 'proto', 'kubernetes', 'objects.proto');
    if (existsSync(file)) {
      root = protobuf.loadSync(file);
      root.resolveAll();
      return root;
    }
    if (dirname(dir) === dir) throw new Error(`no proto/kubernetes/objects.proto in any folder above ${here}`);
  }
}

export function decodesProtobuf(gvk: GroupVersionKind): boolean {
  return MESSAGES[`${gvk.group}/${gvk.version}/${gvk.kind}`] !== undefined;
}

type Obj = Record<string, unknown>;

function rfc3339(t: Obj): string | undefined {
  const seconds = Number(t['seconds'] ?? 0);
  if (seconds === 0) return undefined;
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

/** A decoded message's plain object in the shape JSON gives it. */
function toJson(type: protobuf.Type, msg: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(msg)) {
    const field = type.fields[k];
    if (field === undefined || v === undefined || v === null) continue;
    const rt = field.resolvedType;
    const conv = (x: unknown): unknown => (rt instanceof protobuf.Type ? special(rt, x as Obj) : x);
    if (field.map) {
      const m: Obj = {};
      for (const [mk, mv] of Object.entries(v as Obj)) m[mk] = conv(mv);
      out[k] = m;
    } else if (field.repeated) out[k] = (v as unknown[]).map(conv);
    else {
      const c = conv(v);
      if (c !== undefined) out[k] = c;
    }
  }
  return out;
}

function special(type: protobuf.Type, x: Obj): unknown {
  switch (type.name) {
    case 'Time':
      return rfc3339(x);
    case 'IntOrString':
      return Number(x['type'] ?? 0) === 1 ? (x['strVal'] ?? '') : (x['intVal'] ?? 0);
    case 'Quantity':
      return x['string'] ?? '';
    default:
      return toJson(type, x);
  }
}

/** The body as a JSON-shaped object of the URL's kind; 415 for a kind not decoded here, 400 for bad bytes. */
export function decodeProtobufBody(body: Buffer, gvk: GroupVersionKind): Obj {
  const name = MESSAGES[`${gvk.group}/${gvk.version}/${gvk.kind}`];
  if (name === undefined) throw new StatusError(statuses.unsupportedMediaType(['application/json', 'application/yaml']));
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new StatusError(statuses.badRequest('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]'));
  }
  const r = protoRoot();
  const opts = { longs: Number, bytes: String, defaults: false } as const;
  try {
    const unknown = r.lookupType('setpoint.k8s.Unknown');
    const envelope = unknown.toObject(unknown.decode(body.subarray(MAGIC.length)), { ...opts, bytes: Buffer }) as Obj;
    const encoding = typeof envelope['contentEncoding'] === 'string' ? envelope['contentEncoding'] : '';
    if (encoding !== '') throw new StatusError(statuses.badRequest(`unsupported content encoding ${JSON.stringify(encoding)}`));
    const type = r.lookupType(`setpoint.k8s.${name}`);
    const raw = envelope['raw'] instanceof Uint8Array ? envelope['raw'] : new Uint8Array();
    const obj = toJson(type, type.toObject(type.decode(raw), opts) as Obj);
    const tm = (envelope['typeMeta'] ?? {}) as Obj;
    return { ...(typeof tm['apiVersion'] === 'string' ? { apiVersion: tm['apiVersion'] } : {}), ...(typeof tm['kind'] === 'string' ? { kind: tm['kind'] } : {}), ...obj };
  } catch (e) {
    if (e instanceof StatusError) throw e;
    throw new StatusError(statuses.badRequest(`the body of the request could not be decoded as protobuf: ${(e as Error).message}`));
  }
}
