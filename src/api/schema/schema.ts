// The schema model of our kinds: one description per named type (its OpenAPI definition name, as
// Kubernetes publishes it), with each field's type, whether it is required, its patch strategy and merge
// key (strategic merge patch), its list or map topology (server-side apply) and whether Go serializes it
// when unset. Decoding, OpenAPI documents, strategic merge patch and server-side apply all read this one
// model; the builders below keep the per-kind files short.

export type ListType = 'atomic' | 'set' | 'map';

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export type Schema =
  | { readonly kind: 'string'; readonly format?: 'byte'; readonly enum?: readonly string[] }
  | { readonly kind: 'integer'; readonly format: 'int32' | 'int64' }
  | { readonly kind: 'number'; readonly format: 'double' }
  | { readonly kind: 'boolean' }
  /** resource.Quantity: a string such as "500m", or a bare number. */
  | { readonly kind: 'quantity' }
  /** intstr.IntOrString: an integer or a string. */
  | { readonly kind: 'int-or-string' }
  /** metav1.Time (second precision) or metav1.MicroTime: RFC 3339 strings, null when unset. */
  | { readonly kind: 'time'; readonly precision: 'second' | 'micro' }
  /** Any JSON (runtime.RawExtension, FieldsV1, table cells): never checked, atomic for merges. */
  | { readonly kind: 'any' }
  | ListSchema
  | MapSchema
  | RefSchema
  | StructSchema;

export interface ListSchema {
  readonly kind: 'list';
  readonly items: Schema;
  /** x-kubernetes-list-type: atomic lists are replaced whole; sets and maps merge by item. */
  readonly listType: ListType;
  /** x-kubernetes-list-map-keys, for listType map. */
  readonly mapKeys?: readonly string[];
}

export interface MapSchema {
  readonly kind: 'map';
  readonly values: Schema;
  /** x-kubernetes-map-type: granular maps merge by key, atomic ones are replaced whole. */
  readonly mapType: 'atomic' | 'granular';
}

export interface RefSchema {
  readonly kind: 'ref';
  readonly name: string;
}

export interface StructSchema {
  readonly kind: 'struct';
  readonly fields: Readonly<Record<string, Field>>;
  /** x-kubernetes-map-type on a struct (+structType). */
  readonly structType: 'atomic' | 'granular';
}

export type PatchStrategy = 'merge' | 'retainKeys' | 'merge,retainKeys' | 'replace';

export interface Field {
  readonly schema: Schema;
  readonly description: string;
  readonly required?: boolean;
  /** The strategic merge patch strategy (Go's patchStrategy tag). */
  readonly patchStrategy?: PatchStrategy;
  /** The strategic merge patch key of a merged list (Go's patchMergeKey tag). */
  readonly patchMergeKey?: string;
  /** The default Kubernetes declares for the field (+default): used for list-map keys. */
  readonly default?: unknown;
  /** Go serializes the field even when unset: a struct value, or a field without omitempty. */
  readonly emitted?: boolean;
  /** A Go pointer: when emitted unset it is null rather than the type's zero value. */
  readonly pointer?: boolean;
}

export interface NamedType {
  /** The OpenAPI definition name: io.k8s.api.core.v1.Pod. */
  readonly name: string;
  readonly description: string;
  readonly schema: Schema;
  /** The kinds this type is served as (x-kubernetes-group-version-kind). */
  readonly gvk?: readonly GroupVersionKind[];
}

export type TypeTable = Readonly<Record<string, NamedType>>;

// ---- builders --------------------------------------------------------------------------------------

export const str: Schema = { kind: 'string' };
export const bytes: Schema = { kind: 'string', format: 'byte' };
export const int32: Schema = { kind: 'integer', format: 'int32' };
export const int64: Schema = { kind: 'integer', format: 'int64' };
export const float64: Schema = { kind: 'number', format: 'double' };
export const bool: Schema = { kind: 'boolean' };
export const anyJSON: Schema = { kind: 'any' };

export function enumOf(...values: string[]): Schema {
  return { kind: 'string', enum: values };
}

export function ref(name: string): RefSchema {
  return { kind: 'ref', name };
}

export function atomicList(items: Schema): ListSchema {
  return { kind: 'list', items, listType: 'atomic' };
}

export function setList(items: Schema): ListSchema {
  return { kind: 'list', items, listType: 'set' };
}

export function mapList(items: Schema, ...keys: string[]): ListSchema {
  return { kind: 'list', items, listType: 'map', mapKeys: keys };
}

export function granularMap(values: Schema): MapSchema {
  return { kind: 'map', values, mapType: 'granular' };
}

export function atomicMap(values: Schema): MapSchema {
  return { kind: 'map', values, mapType: 'atomic' };
}

export interface FieldOptions {
  readonly required?: boolean;
  readonly emitted?: boolean;
  readonly pointer?: boolean;
  readonly patch?: PatchStrategy;
  readonly mergeKey?: string;
  readonly default?: unknown;
}

export function field(schema: Schema, description: string, opts: FieldOptions = {}): Field {
  return {
    schema,
    description,
    ...(opts.required === true ? { required: true } : {}),
    ...(opts.patch !== undefined ? { patchStrategy: opts.patch } : {}),
    ...(opts.mergeKey !== undefined ? { patchMergeKey: opts.mergeKey } : {}),
    ...(opts.default !== undefined ? { default: opts.default } : {}),
    ...(opts.emitted === true ? { emitted: true } : {}),
    ...(opts.pointer === true ? { pointer: true } : {}),
  };
}

/** A named struct type. */
export function struct(
  name: string,
  description: string,
  fields: Record<string, Field>,
  opts: { readonly atomic?: boolean; readonly gvk?: readonly GroupVersionKind[] } = {},
): NamedType {
  const schema: StructSchema = { kind: 'struct', fields, structType: opts.atomic === true ? 'atomic' : 'granular' };
  return { name, description, schema, ...(opts.gvk !== undefined ? { gvk: opts.gvk } : {}) };
}

/** A named type that is not a struct (Quantity, Time, RawExtension, …). */
export function named(name: string, description: string, schema: Schema): NamedType {
  return { name, description, schema };
}

/** Indexes named types by name; later tables may not redefine a name. */
export function typeTable(...types: NamedType[]): TypeTable {
  const out: Record<string, NamedType> = {};
  for (const t of types) {
    if (out[t.name] !== undefined) throw new Error(`type ${t.name} defined twice`);
    out[t.name] = t;
  }
  return out;
}
