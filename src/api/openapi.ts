// OpenAPI v3 documents for kubectl, one per group-version, built from the schema model: the component
// schemas (named io.k8s.api.core.v1.Pod, …, with x-kubernetes-group-version-kind, list types, map types,
// patch merge keys and strategies, required fields and descriptions), and paths whose operations carry
// the kind and the fieldValidation parameter, which is what kubectl looks for before it validates,
// computes an apply patch or explains a field. Also the /openapi/v3 index with content hashes.

import { createHash } from 'node:crypto';
import type { SchemaRegistry } from './schema/registry.js';
import type { Field, GroupVersionKind, NamedType, Schema } from './schema/schema.js';

type JSONValue = string | number | boolean | null | JSONValue[] | { [k: string]: JSONValue };
type JSONObject = { [k: string]: JSONValue };

export interface OpenAPIResource {
  /** The plural resource name: pods. */
  readonly name: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** The verbs served: get, list, create, update, patch, delete, deletecollection, watch. */
  readonly verbs: readonly string[];
  readonly subresources?: readonly { readonly name: string; readonly kind: string; readonly group?: string; readonly version?: string; readonly verbs: readonly string[] }[];
}

export interface OpenAPIDocumentOptions {
  /** info.version, Kubernetes' server version. */
  readonly serverVersion?: string;
}

const refPrefix = '#/components/schemas/';
const patchTypes = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];

function refTo(name: string): JSONObject {
  return { $ref: `${refPrefix}${name}` };
}

class Converter {
  readonly #reg: SchemaRegistry;
  readonly schemas: Record<string, JSONValue> = {};

  constructor(reg: SchemaRegistry) {
    this.#reg = reg;
  }

  /** Adds a named type and everything it references. */
  add(name: string): void {
    if (this.schemas[name] !== undefined) return;
    const t = this.#reg.type(name);
    if (t === undefined) throw new Error(`openapi: no type named ${name}`);
    this.schemas[name] = {};
    this.schemas[name] = this.#named(t);
  }

  #named(t: NamedType): JSONObject {
    const s = t.schema;
    const out: JSONObject = { description: t.description };
    switch (s.kind) {
      case 'struct': {
        out.type = 'object';
        const props: JSONObject = {};
        const required: string[] = [];
        for (const [k, f] of Object.entries(s.fields)) {
          props[k] = this.#field(f);
          if (f.required === true) required.push(k);
        }
        out.properties = props;
        if (required.length > 0) out.required = required;
        if (s.structType === 'atomic') out['x-kubernetes-map-type'] = 'atomic';
        break;
      }
      case 'quantity':
        out.oneOf = [{ type: 'string' }, { type: 'number' }];
        break;
      case 'int-or-string':
        out.format = 'int-or-string';
        out.oneOf = [{ type: 'integer' }, { type: 'string' }];
        break;
      case 'time':
        out.type = 'string';
        out.format = 'date-time';
        break;
      case 'any':
        out.type = 'object';
        break;
      default:
        Object.assign(out, this.#schema(s));
    }
    if (t.gvk !== undefined) out['x-kubernetes-group-version-kind'] = t.gvk.map((g) => ({ group: g.group, kind: g.kind, version: g.version }));
    return out;
  }

  #field(f: Field): JSONObject {
    const inner = this.#schema(f.schema);
    const out: JSONObject = '$ref' in inner ? { allOf: [inner] } : { ...inner };
    if (f.default !== undefined) out.default = f.default as JSONValue;
    else if ('$ref' in inner && f.emitted === true && f.pointer !== true && this.#isStruct(f.schema)) out.default = {};
    out.description = f.description;
    if (f.patchMergeKey !== undefined) out['x-kubernetes-patch-merge-key'] = f.patchMergeKey;
    if (f.patchStrategy !== undefined) out['x-kubernetes-patch-strategy'] = f.patchStrategy;
    return out;
  }

  #isStruct(s: Schema): boolean {
    return this.#reg.resolve(s).kind === 'struct';
  }

  // An item of a list or a value of a map: Kubernetes gives struct items default {} and strings "".
  #element(s: Schema): JSONObject {
    const inner = this.#schema(s);
    if ('$ref' in inner) return this.#isStruct(s) ? { allOf: [inner], default: {} } : inner;
    if (inner.type === 'string' && inner.format === undefined && inner.enum === undefined) return { ...inner, default: '' };
    return inner;
  }

  #schema(s: Schema): JSONObject {
    switch (s.kind) {
      case 'ref':
        this.add(s.name);
        return refTo(s.name);
      case 'string': {
        const out: JSONObject = { type: 'string' };
        if (s.format !== undefined) out.format = s.format;
        if (s.enum !== undefined) out.enum = [...s.enum];
        return out;
      }
      case 'integer':
        return { type: 'integer', format: s.format };
      case 'number':
        return { type: 'number', format: s.format };
      case 'boolean':
        return { type: 'boolean' };
      case 'any':
        return { type: 'object' };
      case 'list': {
        const out: JSONObject = { type: 'array', items: this.#element(s.items) };
        out['x-kubernetes-list-type'] = s.listType;
        if (s.mapKeys !== undefined) out['x-kubernetes-list-map-keys'] = [...s.mapKeys];
        return out;
      }
      case 'map': {
        const out: JSONObject = { type: 'object', additionalProperties: this.#element(s.values) };
        if (s.mapType === 'atomic') out['x-kubernetes-map-type'] = 'atomic';
        return out;
      }
      case 'struct':
        throw new Error('openapi: anonymous structs are not supported');
      default:
        // quantity, int-or-string and time only appear through their named types.
        throw new Error(`openapi: unexpected inline ${s.kind}`);
    }
  }
}

function apiVersion(gv: { readonly group: string; readonly version: string }): string {
  return gv.group === '' ? gv.version : `${gv.group}/${gv.version}`;
}

/** The path prefix of a group-version: "api/v1" or "apis/apps/v1". */
export function groupVersionPath(gv: { readonly group: string; readonly version: string }): string {
  return gv.group === '' ? `api/${gv.version}` : `apis/${gv.group}/${gv.version}`;
}

const queryParam = (name: string, description: string, type: 'string' | 'boolean' | 'integer' = 'string'): JSONObject => ({
  name, in: 'query', description, schema: { type, uniqueItems: true },
});
const pathParam = (name: string, description: string): JSONObject => ({ name, in: 'path', required: true, description, schema: { type: 'string', uniqueItems: true } });

const params = {
  pretty: queryParam('pretty', "If 'true', the output is pretty printed."),
  dryRun: queryParam('dryRun', 'When present (All), the request is processed but nothing is persisted.'),
  fieldManager: queryParam('fieldManager', 'The name of the actor or entity making the change, for field management.'),
  fieldValidation: queryParam('fieldValidation', 'How to treat unknown and duplicate fields: Ignore, Warn (the default) or Strict.'),
  force: queryParam('force', 'Force an apply over conflicts with other managers; apply requests only.', 'boolean'),
  labelSelector: queryParam('labelSelector', 'Restrict the list to objects whose labels match.'),
  fieldSelector: queryParam('fieldSelector', 'Restrict the list to objects whose fields match.'),
  limit: queryParam('limit', 'The most items to return; continue with the returned token.', 'integer'),
  continue: queryParam('continue', 'The token of a previous list, to get the next chunk.'),
  resourceVersion: queryParam('resourceVersion', 'The resource version the request is served at or after.'),
  resourceVersionMatch: queryParam('resourceVersionMatch', 'How resourceVersion applies: Exact or NotOlderThan.'),
  watch: queryParam('watch', 'Watch for changes instead of listing.', 'boolean'),
  allowWatchBookmarks: queryParam('allowWatchBookmarks', 'Ask for BOOKMARK events during a watch.', 'boolean'),
  timeoutSeconds: queryParam('timeoutSeconds', 'How long a list or watch call may last.', 'integer'),
  gracePeriodSeconds: queryParam('gracePeriodSeconds', 'Seconds before the object is deleted.', 'integer'),
  propagationPolicy: queryParam('propagationPolicy', 'How dependents are garbage-collected: Orphan, Background or Foreground.'),
};

function operation(
  action: string,
  gvk: GroupVersionKind,
  id: string,
  description: string,
  parameters: readonly JSONObject[],
  response: string,
  body?: 'object' | 'patch' | 'delete',
): JSONObject {
  const op: JSONObject = {
    description,
    operationId: id,
    parameters: [...parameters],
    responses: {
      '200': { description: 'OK', content: { 'application/json': { schema: refTo(response) }, 'application/yaml': { schema: refTo(response) } } },
      '401': { description: 'Unauthorized' },
    },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: gvk.group, kind: gvk.kind, version: gvk.version },
  };
  if (body === 'patch') {
    op.requestBody = { content: Object.fromEntries(patchTypes.map((t) => [t, { schema: refTo('io.k8s.apimachinery.pkg.apis.meta.v1.Patch') }])), required: true };
  } else if (body === 'delete') {
    op.requestBody = { content: { '*/*': { schema: refTo('io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions') } } };
  } else if (body === 'object') {
    op.requestBody = { content: { '*/*': { schema: refTo(response) } }, required: true };
  }
  return op;
}

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * The OpenAPI v3 document of one group-version, for the resources the API server serves in it. The
 * schemas of the resources' kinds, their lists and what they reference are included.
 */
export function openAPIDocument(
  reg: SchemaRegistry,
  gv: { readonly group: string; readonly version: string },
  resources: readonly OpenAPIResource[],
  opts: OpenAPIDocumentOptions = {},
): JSONObject {
  const conv = new Converter(reg);
  const paths: JSONObject = {};
  const prefix = `/${groupVersionPath(gv)}`;
  const opPrefix = `${gv.group.split('.')[0] === '' ? 'core' : (gv.group.split('.')[0] ?? '')}${cap(gv.version)}`;
  conv.add('io.k8s.apimachinery.pkg.apis.meta.v1.Status');
  conv.add('io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions');
  conv.add('io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent');
  conv.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.Patch'] = {
    description: 'The body of a PATCH request: a JSON patch, a merge patch, a strategic merge patch or an apply configuration.',
    type: 'object',
  };
  for (const r of resources) {
    const gvk = { group: gv.group, version: gv.version, kind: r.kind };
    const typeName = reg.typeNameForKind(gvk);
    if (typeName === undefined) throw new Error(`openapi: no schema for ${apiVersion(gv)} ${r.kind}`);
    conv.add(typeName);
    const listName = reg.typeNameForKind({ ...gvk, kind: `${r.kind}List` });
    if (listName !== undefined) conv.add(listName);
    const ns = r.namespaced ? '/namespaces/{namespace}' : '';
    const nsParam = r.namespaced ? [pathParam('namespace', 'The object name and auth scope, such as for teams and projects.')] : [];
    const nameParam = pathParam('name', `The name of the ${r.kind}.`);
    const verbs = new Set(r.verbs);
    const idKind = `${r.namespaced ? 'Namespaced' : ''}${r.kind}`;
    const collection: JSONObject = { parameters: [...nsParam, params.pretty] };
    if (verbs.has('list')) {
      collection.get = operation('list', gvk, `list${cap(opPrefix)}${idKind}`, `List or watch objects of kind ${r.kind}.`, [params.labelSelector, params.fieldSelector, params.limit, params.continue, params.resourceVersion, params.resourceVersionMatch, params.watch, params.allowWatchBookmarks, params.timeoutSeconds], listName ?? typeName);
    }
    if (verbs.has('create')) {
      collection.post = operation('post', gvk, `create${cap(opPrefix)}${idKind}`, `Create a ${r.kind}.`, [params.dryRun, params.fieldManager, params.fieldValidation], typeName, 'object');
    }
    if (verbs.has('deletecollection')) {
      collection.delete = operation('deletecollection', gvk, `deleteCollection${cap(opPrefix)}${idKind}`, `Delete a collection of ${r.kind}.`, [params.dryRun, params.gracePeriodSeconds, params.propagationPolicy, params.labelSelector, params.fieldSelector], 'io.k8s.apimachinery.pkg.apis.meta.v1.Status', 'delete');
    }
    if (Object.keys(collection).length > 1) paths[`${prefix}${ns}/${r.name}`] = collection;
    const item: JSONObject = { parameters: [nameParam, ...nsParam, params.pretty] };
    if (verbs.has('get')) item.get = operation('get', gvk, `read${cap(opPrefix)}${idKind}`, `Read the specified ${r.kind}.`, [], typeName);
    if (verbs.has('update')) item.put = operation('put', gvk, `replace${cap(opPrefix)}${idKind}`, `Replace the specified ${r.kind}.`, [params.dryRun, params.fieldManager, params.fieldValidation], typeName, 'object');
    if (verbs.has('patch')) item.patch = operation('patch', gvk, `patch${cap(opPrefix)}${idKind}`, `Partially update the specified ${r.kind}.`, [params.dryRun, params.fieldManager, params.fieldValidation, params.force], typeName, 'patch');
    if (verbs.has('delete')) item.delete = operation('delete', gvk, `delete${cap(opPrefix)}${idKind}`, `Delete a ${r.kind}.`, [params.dryRun, params.gracePeriodSeconds, params.propagationPolicy], 'io.k8s.apimachinery.pkg.apis.meta.v1.Status', 'delete');
    if (Object.keys(item).length > 1) paths[`${prefix}${ns}/${r.name}/{name}`] = item;
    if (r.namespaced && verbs.has('list')) {
      paths[`${prefix}/${r.name}`] = {
        parameters: [params.pretty],
        get: operation('list', gvk, `list${cap(opPrefix)}${r.kind}ForAllNamespaces`, `List or watch objects of kind ${r.kind} in all namespaces.`, [params.labelSelector, params.fieldSelector, params.limit, params.continue, params.resourceVersion, params.watch, params.timeoutSeconds], listName ?? typeName),
      };
    }
    for (const sub of r.subresources ?? []) {
      const subGvk = { group: sub.group ?? gv.group, version: sub.version ?? gv.version, kind: sub.kind };
      const subType = reg.typeNameForKind(subGvk);
      if (subType === undefined) throw new Error(`openapi: no schema for ${apiVersion(subGvk)} ${sub.kind}`);
      conv.add(subType);
      const sv = new Set(sub.verbs);
      const subPath: JSONObject = { parameters: [nameParam, ...nsParam, params.pretty] };
      const sid = `${cap(opPrefix)}${idKind}${cap(sub.name)}`;
      if (sv.has('get')) subPath.get = operation('get', subGvk, `read${sid}`, `Read the ${sub.name} of the specified ${r.kind}.`, [], subType);
      if (sv.has('update')) subPath.put = operation('put', subGvk, `replace${sid}`, `Replace the ${sub.name} of the specified ${r.kind}.`, [params.dryRun, params.fieldManager, params.fieldValidation], subType, 'object');
      if (sv.has('patch')) subPath.patch = operation('patch', subGvk, `patch${sid}`, `Partially update the ${sub.name} of the specified ${r.kind}.`, [params.dryRun, params.fieldManager, params.fieldValidation, params.force], subType, 'patch');
      if (sv.has('create')) subPath.post = operation('post', subGvk, `create${sid}`, `Create the ${sub.name} of a ${r.kind}.`, [params.dryRun, params.fieldManager, params.fieldValidation], subType, 'object');
      paths[`${prefix}${ns}/${r.name}/{name}/${sub.name}`] = subPath;
    }
  }
  const sorted = Object.fromEntries(Object.keys(conv.schemas).sort().map((k) => [k, conv.schemas[k] as JSONValue]));
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: opts.serverVersion ?? 'v1.32.0' },
    paths,
    components: { schemas: sorted },
  };
}

/** The hash Kubernetes puts in serverRelativeURL: SHA-512 of the document, upper-case hex. */
export function openAPIHash(doc: unknown): string {
  return createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase();
}

/** The /openapi/v3 index: for each group-version path, the URL of its document with its hash. */
export function openAPIIndex(docs: readonly { readonly groupVersion: { readonly group: string; readonly version: string }; readonly document: unknown }[]): JSONObject {
  const paths: JSONObject = {};
  for (const d of docs) {
    const p = groupVersionPath(d.groupVersion);
    paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${openAPIHash(d.document)}` };
  }
  return { paths };
}
