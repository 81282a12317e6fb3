// The schemas of our kinds in one read-only registry: named types by OpenAPI name, kinds by
// group/version/kind, and the list type of each kind. Built once from the type tables; nothing in it
// changes after construction, so every request can share it.

import { admissionregistrationV1Types } from './admissionregistration-v1-types.js';
import { appsV1Types } from './apps-v1-types.js';
import { clusterTypes } from './cluster-types.js';
import { coreV1ContainerTypes } from './core-v1-container-types.js';
import { coreV1PodTypes } from './core-v1-pod-types.js';
import { coreV1Types } from './core-v1-types.js';
import { coreV1VolumeTypes } from './core-v1-volume-types.js';
import { metaV1Types } from './meta-v1-types.js';
import { atomicList, field, ref, struct } from './schema.js';
import type { GroupVersionKind, NamedType, Schema, StructSchema, TypeTable } from './schema.js';
import { meta, typeMetaFields } from './type-refs.js';

export function gvkString(gvk: GroupVersionKind): string {
  return `${gvk.group === '' ? '' : `${gvk.group}/`}${gvk.version}, Kind=${gvk.kind}`;
}

export function apiVersionOf(gvk: { readonly group: string; readonly version: string }): string {
  return gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`;
}

function gvkKey(group: string, version: string, kind: string): string {
  return `${group}/${version}/${kind}`;
}

// The Go package alias Kubernetes' decode errors print for a type (v1.PodSpec, resource.Quantity).
function goTypeName(name: string): string {
  const parts = name.split('.');
  const last = parts[parts.length - 1] ?? name;
  const pkg = parts[parts.length - 2] ?? '';
  return `${pkg}.${last}`;
}

export class SchemaRegistry {
  readonly #types: Map<string, NamedType>;
  readonly #kinds = new Map<string, string>();

  constructor(...tables: TypeTable[]) {
    this.#types = new Map();
    for (const t of tables) {
      for (const [name, type] of Object.entries(t)) {
        if (this.#types.has(name)) throw new Error(`type ${name} defined twice`);
        this.#types.set(name, type);
      }
    }
    for (const type of [...this.#types.values()]) {
      for (const gvk of type.gvk ?? []) {
        this.#kinds.set(gvkKey(gvk.group, gvk.version, gvk.kind), type.name);
        this.#addList(type, gvk);
      }
    }
  }

  // Every kind's list type (PodList, …): items of the kind plus list metadata.
  #addList(type: NamedType, gvk: GroupVersionKind): void {
    if (gvk.kind === 'Status' || gvk.kind === 'Table' || gvk.kind === 'PartialObjectMetadata' || gvk.kind === 'Binding' || gvk.kind === 'Scale') return;
    const listName = `${type.name}List`;
    if (this.#types.has(listName)) return;
    const listGvk = { ...gvk, kind: `${gvk.kind}List` };
    this.#types.set(
      listName,
      struct(
        listName,
        `A list of ${gvk.kind} objects.`,
        {
          ...typeMetaFields,
          items: field(atomicList(ref(type.name)), `The ${gvk.kind} objects.`, { required: true, emitted: true }),
          metadata: field(meta('ListMeta'), 'Standard list metadata.', { emitted: true }),
        },
        { gvk: [listGvk] },
      ),
    );
    this.#kinds.set(gvkKey(listGvk.group, listGvk.version, listGvk.kind), listName);
  }

  /** A named type, or undefined. */
  type(name: string): NamedType | undefined {
    return this.#types.get(name);
  }

  /** All named types, in definition order. */
  types(): IterableIterator<NamedType> {
    return this.#types.values();
  }

  /** The name of the type served as a kind, or undefined when the registry does not know the kind. */
  typeNameForKind(gvk: GroupVersionKind): string | undefined {
    return this.#kinds.get(gvkKey(gvk.group, gvk.version, gvk.kind));
  }

  /** The root schema of a kind (a ref to its named type). */
  kindSchema(gvk: GroupVersionKind): Schema | undefined {
    const name = this.typeNameForKind(gvk);
    return name === undefined ? undefined : ref(name);
  }

  /** Follows references until a schema that is not one; throws on a dangling reference. */
  resolve(s: Schema): Exclude<Schema, { kind: 'ref' }> {
    let cur = s;
    while (cur.kind === 'ref') {
      const t = this.#types.get(cur.name);
      if (t === undefined) throw new Error(`schema: no type named ${cur.name}`);
      cur = t.schema;
    }
    return cur;
  }

  /** The struct a schema resolves to, or undefined. */
  struct(s: Schema): StructSchema | undefined {
    const r = this.resolve(s);
    return r.kind === 'struct' ? r : undefined;
  }

  /** How Kubernetes' decoder names a schema's Go type in its errors ("v1.PodSpec", "int32"). */
  goType(s: Schema): string {
    switch (s.kind) {
      case 'ref': {
        const t = this.resolve(s);
        if (t.kind === 'struct' || t.kind === 'quantity' || t.kind === 'int-or-string' || t.kind === 'time') return goTypeName(s.name);
        return this.goType(t);
      }
      case 'string':
        return s.format === 'byte' ? '[]uint8' : 'string';
      case 'integer':
        return s.format;
      case 'number':
        return 'float64';
      case 'boolean':
        return 'bool';
      case 'list':
        return `[]${this.goType(s.items)}`;
      case 'map':
        return `map[string]${this.goType(s.values)}`;
      case 'struct':
        return 'struct';
      default:
        return 'interface {}';
    }
  }

  /** Checks that every reference resolves; the tests run it so a typo fails loudly. */
  danglingReferences(): string[] {
    const bad = new Set<string>();
    const visit = (s: Schema): void => {
      switch (s.kind) {
        case 'ref':
          if (!this.#types.has(s.name)) bad.add(s.name);
          break;
        case 'list':
          visit(s.items);
          break;
        case 'map':
          visit(s.values);
          break;
        case 'struct':
          for (const f of Object.values(s.fields)) visit(f.schema);
          break;
        default:
      }
    };
    for (const t of this.#types.values()) visit(t.schema);
    return [...bad];
  }
}

/** The schemas of every kind Setpoint serves. */
export const builtinSchemas = new SchemaRegistry(
  metaV1Types,
  coreV1Types,
  coreV1VolumeTypes,
  coreV1ContainerTypes,
  coreV1PodTypes,
  appsV1Types,
  clusterTypes,
  admissionregistrationV1Types,
);
