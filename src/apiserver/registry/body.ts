// A write's body, from bytes to a decoded object of the URL's kind: JSON or YAML (Kubernetes' serializers),
// apiVersion and kind checked against the URL, fields checked against the schema as fieldValidation says
// (Strict fails with Kubernetes' "strict decoding error", Warn answers Warning headers, Ignore drops them).
import { parse as parseYaml } from 'yaml';
import { ApiError } from '../../api/api-error.js';
import { cannotBeHandledMessage, decodeValue, strictDecodingMessage, type FieldValidation } from '../../api/decode.js';
import type { SchemaRegistry } from '../../api/schema/registry.js';
import { apiVersionOf } from '../../api/schema/registry.js';
import type { GroupVersionKind } from '../../api/schema/schema.js';
import { parseJSON } from '../../api/strict-json.js';
import { StatusError, statuses } from '../status.js';
import type { StoredObject } from '../storage/interface.js';
import { decodeProtobufBody, PROTOBUF_MEDIA_TYPE } from './protobuf-body.js';

export const JSON_TYPES = ['application/json'];
export const BODY_TYPES = ['application/json', 'application/yaml'];

export function fieldValidationOf(query: URLSearchParams): FieldValidation {
  const v = query.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw new StatusError(statuses.badRequest(`fieldValidation parameter unsupported: ${v}`));
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses JSON or YAML text to a value; Go's parse messages for JSON, the YAML library's for YAML. */
export function parseText(text: string, mediaType: string | undefined, _gvk: GroupVersionKind): unknown {
  const yaml = mediaType === 'application/yaml' || mediaType === 'application/apply-patch+yaml';
  // Protobuf bodies (kubectl's typed generators send them) are not decoded here: 415 names what is.
  if (mediaType !== undefined && !yaml && !mediaType.endsWith('json')) throw new StatusError(statuses.unsupportedMediaType(['application/json', 'application/yaml']));
  try {
    if (!yaml) return parseJSON(text).value;
    const v: unknown = parseYaml(text, { maxAliasCount: 100 });
    return v;
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    throw new StatusError(statuses.badRequest(yaml ? `error converting YAML to JSON: ${detail}` : `couldn't get version/kind; json parse error: ${detail}`));
  }
}

/** A create's or a PUT's body: protobuf for the kinds kubectl's typed generators send it for, else JSON or YAML. */
export function parseBody(body: Buffer, mediaType: string | undefined, gvk: GroupVersionKind): unknown {
  if (mediaType === PROTOBUF_MEDIA_TYPE) return decodeProtobufBody(body, gvk);
  return parseText(body.toString('utf8'), mediaType, gvk);
}

/** Kubernetes' checks that a body is of the URL's kind (a body may omit both, as client-node's do). */
export function checkTypeMeta(value: unknown, gvk: GroupVersionKind): Record<string, unknown> {
  if (!isPlainObject(value)) {
    throw new StatusError(statuses.badRequest(cannotBeHandledMessage(gvk, `json: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value} into Go value of type struct`)));
  }
  const want = apiVersionOf(gvk);
  const av = value['apiVersion'];
  if (av !== undefined && av !== '' && av !== want) {
    throw new StatusError(statuses.badRequest(`the API version in the data (${String(av)}) does not match the expected API version (${want})`));
  }
  const kind = value['kind'];
  if (kind !== undefined && kind !== '' && kind !== gvk.kind) {
    throw new StatusError(statuses.badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (${gvk.kind})`));
  }
  return value;
}

export interface DecodedBody {
  readonly object: StoredObject;
  readonly warnings: readonly string[];
}

/** Decodes a value (already parsed, or a patch's result) as the kind; ApiErrors become the caller's 400. */
export function decodeAs(reg: SchemaRegistry, gvk: GroupVersionKind, value: unknown, fieldValidation: FieldValidation): DecodedBody {
  const obj = checkTypeMeta(value, gvk);
  const schema = reg.kindSchema(gvk);
  if (schema === undefined) throw new Error(`no schema for ${gvk.kind}`);
  let decoded;
  try {
    decoded = decodeValue(reg, schema, { value: obj }, { reportStrict: fieldValidation !== 'Ignore' });
  } catch (e) {
    if (e instanceof ApiError) throw new StatusError(statuses.badRequest(cannotBeHandledMessage(gvk, e.message)));
    throw e;
  }
  if (decoded.strictErrors.length > 0 && fieldValidation === 'Strict') {
    throw new StatusError(statuses.badRequest(strictDecodingMessage(decoded.strictErrors)));
  }
  const out = decoded.object as StoredObject;
  out.apiVersion = apiVersionOf(gvk);
  out.kind = gvk.kind;
  if (!isPlainObject(out.metadata)) out.metadata = {};
  return { object: out, warnings: fieldValidation === 'Warn' ? decoded.strictErrors : [] };
}

/** A Warning header value as Kubernetes writes one (299, agent "-", the text quoted). */
export function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text)}`;
}
