// The field manager the API server runs on every write of a kind, as Kubernetes composes it: updates
// (create, PUT, non-apply PATCH) record what their manager changed, server-side applies merge, prune
// and report conflicts; around them the steps Kubernetes adds — metadata fields never owned, one
// managedFields entry per manager (Update entries per apiVersion), at most ten Update managers (older
// ones folded into "ancient-changes"), "before-first-apply" for objects that had no managedFields,
// no tracking for updates of objects that never had any, the kubectl client-side-apply upgrade path
// (conflicts allowed by last-applied-configuration) and that annotation kept current for kubectl.

import { ApiError } from '../api-error.js';
import { decodeValue } from '../decode.js';
import { annotationsSize, totalAnnotationSizeLimitBytes } from '../object-meta-validation.js';
import { apiVersionOf, gvkString } from '../schema/registry.js';
import type { SchemaRegistry } from '../schema/registry.js';
import type { GroupVersionKind, Schema } from '../schema/schema.js';
import { FieldSet } from './field-set.js';
import { ApplyConflictError, decodeManagedFields, encodeManagedFields, managerIdentifier } from './managed-fields.js';
import type { Managed, ManagedFieldsEntry } from './managed-fields.js';
import { fieldPE } from './path-element.js';
import { Typed, ValidationError } from './typed.js';
import { ConflictsError, Updater } from './updater.js';
import type { Conflict, ManagedFields } from './updater.js';

type JSONObject = Record<string, unknown>;

export const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';
export const defaultMaxUpdateManagers = 10;

export interface FieldManagerOptions {
  readonly registry: SchemaRegistry;
  readonly gvk: GroupVersionKind;
  /** '' (the default) for the main resource, else the subresource, such as status or scale. */
  readonly subresource?: string;
  /** Fields the kind's strategy resets through this endpoint (status for the main resource). */
  readonly resetFields?: readonly (readonly string[])[];
  /** The clock for managedFields times. */
  readonly now?: () => Date;
  /** The kind's defaulting, which Kubernetes runs on the object an apply produces. */
  readonly defaulter?: (obj: JSONObject) => JSONObject;
  readonly maxUpdateManagers?: number;
}

// Paths never owned by anyone: type, identity and bookkeeping metadata (Kubernetes' stripMeta).
const stripSet = FieldSet.of(
  [fieldPE('apiVersion')],
  [fieldPE('kind')],
  [fieldPE('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => [fieldPE('metadata'), fieldPE(f)]),
);

const isObject = (v: unknown): v is JSONObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function metaOf(o: JSONObject): JSONObject {
  return isObject(o.metadata) ? o.metadata : {};
}

function withoutManagedFields(o: JSONObject): JSONObject {
  const meta = metaOf(o);
  if (!('managedFields' in meta)) return o;
  const { managedFields: _drop, ...rest } = meta;
  return { ...o, metadata: rest };
}

function withManagedFields(o: JSONObject, entries: ManagedFieldsEntry[] | undefined): JSONObject {
  const base = withoutManagedFields(o);
  if (entries === undefined) return base;
  return { ...base, metadata: { ...metaOf(base), managedFields: entries } };
}

// Go's json.Encoder: keys sorted, HTML characters escaped, a newline at the end.
function goEncode(v: unknown): string {
  const enc = (x: unknown): string => {
    if (Array.isArray(x)) return `[${x.map(enc).join(',')}]`;
    if (isObject(x)) return `{${Object.keys(x).sort().map((k) => `${enc(k)}:${enc(x[k])}`).join(',')}}`;
    return JSON.stringify(x) ?? 'null';
  };
  return `${enc(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`;
}

function objectName(o: JSONObject, gvk: GroupVersionKind): string {
  const m = metaOf(o);
  return `${typeof m.namespace === 'string' ? m.namespace : ''}/${typeof m.name === 'string' ? m.name : ''}; ${gvkString(gvk)}`;
}

export class FieldManager {
  readonly #gvk: GroupVersionKind;
  readonly #apiVersion: string;
  readonly #subresource: string;
  readonly #typed: Typed;
  readonly #schema: Schema;
  readonly #updater: Updater;
  readonly #now: () => Date;
  readonly #defaulter: ((obj: JSONObject) => JSONObject) | undefined;
  readonly #maxUpdateManagers: number;
  readonly #empty: JSONObject;

  constructor(opts: FieldManagerOptions) {
    const schema = opts.registry.kindSchema(opts.gvk);
    if (schema === undefined) throw new Error(`field manager: no schema for ${gvkString(opts.gvk)}`);
    this.#gvk = opts.gvk;
    this.#apiVersion = apiVersionOf(opts.gvk);
    this.#subresource = opts.subresource ?? '';
    this.#typed = new Typed(opts.registry);
    this.#schema = schema;
    const reset = opts.resetFields === undefined ? undefined : FieldSet.of(...opts.resetFields.map((p) => p.map(fieldPE)));
    this.#updater = new Updater(this.#typed, schema, reset);
    this.#now = opts.now ?? (() => new Date());
    this.#defaulter = opts.defaulter;
    this.#maxUpdateManagers = opts.maxUpdateManagers ?? defaultMaxUpdateManagers;
    // The object Kubernetes compares a create against: the kind's zero value as Go serializes it.
    this.#empty = decodeValue(opts.registry, schema, { value: {} }).object;
  }

  #time(): string {
    return new Date(Math.floor(this.#now().getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  }

  #strip(m: ManagedFields, id: string): ManagedFields {
    const vs = m.get(id);
    if (vs === undefined) return m;
    const out = new Map(m);
    const set = vs.set.difference(stripSet);
    if (set.isEmpty()) out.delete(id);
    else out.set(id, { ...vs, set });
    return out;
  }

  /**
   * Records an update (create when `live` is undefined, PUT, or a non-apply PATCH) by `manager`:
   * returns `next` with its managedFields. Like Kubernetes' UpdateNoErrors, a failure to compute them
   * leaves the object without managedFields rather than failing the write.
   */
  update(live: JSONObject | undefined, next: JSONObject, manager: string): JSONObject {
    const liveObj = live ?? this.#empty;
    let managed: Managed;
    try {
      managed = this.#decodeLiveOrNew(liveObj, next);
    } catch {
      return withoutManagedFields(next);
    }
    const nextObj = withoutManagedFields(next);
    // Updates of objects that exist without managedFields do not start tracking them.
    if (managed.fields.size === 0 && typeof metaOf(liveObj).uid === 'string' && metaOf(liveObj).uid !== '') return nextObj;
    try {
      const result = this.#updateManaged(liveObj, nextObj, managed, manager);
      return withManagedFields(nextObj, encodeManagedFields(this.#cap(result)));
    } catch {
      return nextObj;
    }
  }

  #decodeLiveOrNew(live: JSONObject, next: JSONObject): Managed {
    const fromLive = (): Managed => {
      try {
        return decodeManagedFields(metaOf(live).managedFields as ManagedFieldsEntry[] | undefined);
      } catch {
        return { fields: new Map(), times: new Map() };
      }
    };
    if (this.#subresource !== '') return fromLive();
    const mf = metaOf(next).managedFields;
    // An empty list, or a single empty entry, resets managedFields.
    if (Array.isArray(mf) && (mf.length === 0 || (mf.length === 1 && isObject(mf[0]) && Object.keys(mf[0]).length === 0))) {
      return { fields: new Map(), times: new Map() };
    }
    try {
      const m = decodeManagedFields(mf as ManagedFieldsEntry[] | undefined);
      return m.fields.size === 0 ? fromLive() : m;
    } catch {
      return fromLive();
    }
  }

  // The Update chain: the change recorded as "current-operation", stripped, then folded into the
  // manager's entry with the current time.
  #updateManaged(live: JSONObject, next: JSONObject, managed: Managed, manager: string): Managed {
    const liveObj = withoutManagedFields(live);
    this.#typed.validate(this.#schema, liveObj, true);
    this.#typed.validate(this.#schema, next, true);
    const id = managerIdentifier({ manager: manager === '' ? 'unknown' : manager, operation: 'Update', apiVersion: this.#apiVersion, subresource: this.#subresource });
    const self = 'current-operation';
    let fields = this.#updater.update(liveObj, next, this.#apiVersion, managed.fields, self);
    fields = this.#strip(fields, self);
    const times = new Map(managed.times);
    const vs = fields.get(self);
    if (vs !== undefined) {
      fields = new Map(fields);
      fields.delete(self);
      const previous = fields.get(id);
      fields.set(id, { set: previous === undefined ? vs.set : vs.set.union(previous.set), apiVersion: vs.apiVersion, applied: vs.applied });
      times.set(id, this.#time());
    }
    return { fields, times };
  }

  // At most maxUpdateManagers Update entries: the oldest merge into "ancient-changes" per apiVersion.
  #cap(m: Managed): Managed {
    const updaters = [...m.fields.entries()].filter(([, vs]) => !vs.applied).map(([id]) => id);
    if (updaters.length <= this.#maxUpdateManagers) return m;
    const secs = (id: string): number => {
      const t = m.times.get(id);
      return t === undefined ? 0 : Math.floor(Date.parse(t) / 1000);
    };
    updaters.sort((a, b) => secs(a) - secs(b) || (a < b ? -1 : a > b ? 1 : 0));
    const fields = new Map(m.fields);
    const times = new Map(m.times);
    const firstByVersion = new Map<string, string>();
    let length = updaters.length;
    for (let i = 0; i < updaters.length && length > this.#maxUpdateManagers; i++) {
      const id = updaters[i] as string;
      const vs = fields.get(id);
      if (vs === undefined) continue;
      const bucket = managerIdentifier({ manager: 'ancient-changes', operation: 'Update', apiVersion: vs.apiVersion });
      const first = firstByVersion.get(vs.apiVersion);
      if (first === undefined) {
        firstByVersion.set(vs.apiVersion, id);
        continue;
      }
      if (!fields.has(bucket)) {
        const s = fields.get(first);
        fields.delete(first);
        if (s !== undefined) fields.set(bucket, s);
      }
      const b = fields.get(bucket);
      fields.set(bucket, { set: vs.set.union(b?.set ?? FieldSet.empty()), apiVersion: vs.apiVersion, applied: vs.applied });
      fields.delete(id);
      length--;
      times.set(bucket, times.get(id));
    }
    return { fields, times };
  }

  /**
   * A server-side apply of `config` by `manager` onto `live` (undefined when the object does not exist
   * yet): the new object with its managedFields. Throws ApplyConflictError (409) on conflicts unless
   * `force`, and ApiError for a bad configuration, with Kubernetes' messages.
   */
  apply(live: JSONObject | undefined, config: JSONObject, manager: string, force: boolean): JSONObject {
    const liveObj = live ?? this.#empty;
    let managed: Managed;
    try {
      managed = decodeManagedFields(metaOf(liveObj).managedFields as ManagedFieldsEntry[] | undefined);
    } catch (e) {
      throw new ApiError('MANAGED_FIELDS_INVALID', '', `failed to decode managed fields: ${(e as Error).message}`);
    }
    const av = typeof config.apiVersion === 'string' ? config.apiVersion : '';
    const kind = typeof config.kind === 'string' ? config.kind : '';
    if (av !== this.#apiVersion || kind !== this.#gvk.kind) {
      const i = av.indexOf('/');
      const given = { group: i < 0 ? '' : av.slice(0, i), version: i < 0 ? av : av.slice(i + 1), kind };
      throw new ApiError('APPLY_BAD_REQUEST', 'BadRequest', `invalid object type: ${gvkString(given)}`);
    }
    const mf = metaOf(config).managedFields;
    if (mf !== undefined && mf !== null) throw new ApiError('APPLY_BAD_REQUEST', 'BadRequest', 'metadata.managedFields must be nil');

    let result: { object: JSONObject; managed: Managed };
    try {
      result = this.#applyManaged(liveObj, config, managed, manager, force);
    } catch (e) {
      if (!(e instanceof ConflictsError)) throw e;
      result = this.#afterConflicts(e.conflicts, liveObj, config, managed, manager);
    }
    let object = result.object;
    if (manager === 'kubectl') object = this.#keepLastApplied(object, config);
    return withManagedFields(object, encodeManagedFields(result.managed));
  }

  #applyManaged(live: JSONObject, config: JSONObject, managed: Managed, manager: string, force: boolean): { object: JSONObject; managed: Managed } {
    let liveObj = withoutManagedFields(live);
    let m = managed;
    // Fields that existed before the first apply get an owner of their own.
    if (m.fields.size === 0) m = this.#updateManaged(this.#empty, liveObj, m, 'before-first-apply');
    try {
      this.#typed.validate(this.#schema, config, false);
    } catch (e) {
      if (e instanceof ValidationError) throw new ApiError('APPLY_INVALID_OBJECT', '', `failed to create typed patch object (${objectName(config, this.#gvk)}): ${e.message}`);
      throw e;
    }
    try {
      this.#typed.validate(this.#schema, liveObj, true);
    } catch (e) {
      if (e instanceof ValidationError) throw new ApiError('APPLY_INVALID_OBJECT', '', `failed to create typed live object (${objectName(liveObj, this.#gvk)}): ${e.message}`);
      throw e;
    }
    const id = managerIdentifier({ manager, operation: 'Apply', subresource: this.#subresource });
    const r = this.#updater.apply(liveObj, config, this.#apiVersion, m.fields, id, force);
    const fields = this.#strip(r.managers, id);
    const times = new Map(m.times);
    if (r.object === undefined) return { object: liveObj, managed: { fields, times } };
    times.set(id, this.#time());
    let object = r.object as JSONObject;
    if (this.#defaulter !== undefined) object = this.#defaulter(object);
    liveObj = object;
    return { object: liveObj, managed: { fields, times } };
  }

  // kubectl's upgrade from client-side apply: conflicts on fields its last-applied-configuration
  // still describes (and the object still has) are not conflicts for the "kubectl" manager.
  #afterConflicts(conflicts: readonly Conflict[], live: JSONObject, config: JSONObject, managed: Managed, manager: string): { object: JSONObject; managed: Managed } {
    if (manager !== 'kubectl') throw new ApplyConflictError(conflicts);
    const allowed = this.#allowedByLastApplied(live);
    if (allowed === undefined) throw new ApplyConflictError(conflicts);
    const remaining = conflicts.filter((c) => !allowed.has(c.path));
    if (remaining.length > 0) throw new ApplyConflictError(remaining);
    return this.#applyManaged(live, config, managed, manager, true);
  }

  #allowedByLastApplied(live: JSONObject): FieldSet | undefined {
    const annotations = metaOf(live).annotations;
    const text = isObject(annotations) ? annotations[lastAppliedAnnotation] : undefined;
    if (typeof text !== 'string' || text === '') return undefined;
    let last: unknown;
    try {
      last = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (!isObject(last) || last.apiVersion !== this.#apiVersion) return undefined;
    const liveObj = withoutManagedFields(live);
    try {
      this.#typed.validate(this.#schema, last, false);
    } catch {
      return undefined;
    }
    const c = this.#typed.compare(this.#schema, last, liveObj);
    return this.#typed.toFieldSet(this.#schema, last).difference(c.modified).difference(c.added).difference(c.removed);
  }

  // For kubectl, an object carrying last-applied-configuration keeps it equal to the applied config.
  #keepLastApplied(object: JSONObject, config: JSONObject): JSONObject {
    const annotations = metaOf(object).annotations;
    if (!isObject(annotations) || typeof annotations[lastAppliedAnnotation] !== 'string' || annotations[lastAppliedAnnotation] === '') return object;
    const cfgMeta = metaOf(config);
    let cfg = config;
    if (isObject(cfgMeta.annotations)) {
      const { [lastAppliedAnnotation]: _drop, ...rest } = cfgMeta.annotations;
      cfg = { ...config, metadata: { ...cfgMeta, annotations: rest } };
    }
    const next: JSONObject = { ...annotations, [lastAppliedAnnotation]: goEncode(cfg) };
    if (annotationsSize(next as Record<string, string>) > totalAnnotationSizeLimitBytes) delete next[lastAppliedAnnotation];
    return { ...object, metadata: { ...metaOf(object), annotations: next } };
  }
}

/** The manager of a request without fieldManager: its User-Agent up to the first "/" (Kubernetes' rule). */
export function managerFromUserAgent(userAgent: string): string {
  const head = userAgent.split('/')[0] ?? '';
  let out = '';
  for (const ch of head) {
    const c = ch.codePointAt(0) ?? 0;
    if (c < 0x20 || (c >= 0x7f && c < 0xa0)) continue;
    if (Buffer.byteLength(out + ch) > 128) break;
    out += ch;
  }
  return out;
}
