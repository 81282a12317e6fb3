// Strategic merge patch against Kubernetes' own cases (apimachinery v0.32 strategicpatch/patch_test.go:
// the two-way and three-way cases and the custom cases, read from that file into
// fixtures/strategic-merge-patch-cases.json): each patch applied to its original (and each three-way
// patch to its current object) must give Kubernetes' expected result; the "raw" cases also fix the order
// of merged lists. The schema is that test's MergeItem type. Then cases on our kinds, as kubectl sends them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isApiError } from '../../src/api/api-error.js';
import { applyStrategicMergePatch } from '../../src/api/patch/strategic-merge-patch.js';
import { builtinSchemas, SchemaRegistry } from '../../src/api/schema/registry.js';
import { anyJSON, atomicList, field, granularMap, int64, mapList, named, ref, setList, str, struct, typeTable } from '../../src/api/schema/schema.js';
import type { Schema } from '../../src/api/schema/schema.js';
import { goSprintV } from '../../src/api/field-errors.js';

interface Case {
  readonly set: 'yaml' | 'customYaml' | 'raw' | 'customRaw';
  readonly description: string;
  readonly original: unknown;
  readonly twoWay: unknown;
  readonly expected: unknown;
  readonly current?: unknown;
  readonly threeWay?: unknown;
  readonly result?: unknown;
  readonly expectedError?: string;
  readonly sorted: boolean;
}

const cases = JSON.parse(readFileSync(new URL('./fixtures/strategic-merge-patch-cases.json', import.meta.url), 'utf8')) as Case[];

// The MergeItem type of Kubernetes' strategicpatch tests.
const mergeItem = ref('mergeItem');
const testSchemas = new SchemaRegistry(
  typeTable(
    struct('mergeItem', 'MergeItem of the strategicpatch tests.', {
      name: field(str, 'name'),
      value: field(str, 'value'),
      other: field(str, 'other'),
      mergingList: field(mapList(mergeItem, 'name'), 'merged by name', { patch: 'merge', mergeKey: 'name' }),
      nonMergingList: field(atomicList(mergeItem), 'replaced'),
      mergingIntList: field(setList(int64), 'merged as a set', { patch: 'merge' }),
      nonMergingIntList: field(atomicList(int64), 'replaced'),
      mergeItemPtr: field(mergeItem, 'merged', { patch: 'merge', mergeKey: 'name' }),
      simpleMap: field(granularMap(str), 'a map'),
      replacingItem: field(ref('rawExtension'), 'replaced', { patch: 'replace' }),
      retainKeysMap: field(ref('retainKeysMergeItem'), 'retain keys', { patch: 'retainKeys' }),
      retainKeysMergingList: field(mapList(mergeItem, 'name'), 'merged, retain keys', { patch: 'merge,retainKeys', mergeKey: 'name' }),
    }),
    struct('retainKeysMergeItem', 'RetainKeysMergeItem of the strategicpatch tests.', {
      name: field(str, 'name'),
      value: field(str, 'value'),
      other: field(str, 'other'),
      simpleMap: field(granularMap(str), 'a map'),
      mergingIntList: field(setList(int64), 'merged as a set', { patch: 'merge' }),
      mergingList: field(mapList(mergeItem, 'name'), 'merged by name', { patch: 'merge', mergeKey: 'name' }),
      nonMergingList: field(atomicList(mergeItem), 'replaced'),
    }),
    named('rawExtension', 'RawExtension', anyJSON),
  ),
);

// The tests' sortMergeListsByName: merge lists sorted by key, primitive merge lists sorted, so that
// results compare regardless of list order.
function sortMergeLists(v: unknown, schema: Schema): unknown {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
  const st = testSchemas.struct(schema);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const f = st?.fields[k];
    if ((k === '$retainKeys' || k.startsWith('$deleteFromPrimitiveList')) && Array.isArray(x)) {
      out[k] = [...x].sort((a, b) => (goSprintV(a) < goSprintV(b) ? -1 : 1));
    } else if (f !== undefined && Array.isArray(x) && f.patchStrategy?.split(',').includes('merge') === true) {
      const items = (testSchemas.resolve(f.schema) as { items: Schema }).items;
      if (x.length > 0 && typeof x[0] === 'object') {
        out[k] = x.map((e) => sortMergeLists(e, items)).sort((a, b) => (goSprintV((a as Record<string, unknown>).name) < goSprintV((b as Record<string, unknown>).name) ? -1 : 1));
      } else {
        out[k] = [...new Set(x)].sort((a, b) => (goSprintV(a) < goSprintV(b) ? -1 : 1));
      }
    } else if (f !== undefined && typeof x === 'object' && x !== null && !Array.isArray(x)) {
      out[k] = sortMergeLists(x, f.schema);
    } else {
      out[k] = x;
    }
  }
  return out;
}

const apply = (original: unknown, patch: unknown): unknown => applyStrategicMergePatch(testSchemas, mergeItem, original, patch);

describe("strategic merge patch: Kubernetes' test cases", () => {
  const twoWay = cases.filter((c) => c.twoWay !== null);
  it.each(twoWay.map((c, i) => [`${c.set} ${i}: ${c.description}`, c] as const))('%s', (_name, c) => {
    if (c.expectedError !== undefined) {
      expect(() => apply(c.original, c.twoWay)).toThrow(c.expectedError);
      return;
    }
    const got = apply(c.original ?? {}, c.twoWay);
    const want = c.expected ?? {};
    if (c.sorted) expect(sortMergeLists(got, mergeItem)).toEqual(sortMergeLists(want, mergeItem));
    else expect(got).toEqual(want);
  });

  const threeWay = cases.filter((c) => c.threeWay !== undefined && c.result !== undefined && c.threeWay !== null);
  it.each(threeWay.map((c, i) => [`${c.set} ${i}: ${c.description}`, c] as const))('three-way %s', (_name, c) => {
    const got = apply(c.current ?? {}, c.threeWay);
    if (c.sorted) expect(sortMergeLists(got, mergeItem)).toEqual(sortMergeLists(c.result, mergeItem));
    else expect(got).toEqual(c.result);
  });

  it('has the cases it was built from', () => {
    expect(twoWay.length).toBeGreaterThan(130);
    expect(threeWay.length).toBeGreaterThan(100);
  });
});

describe('strategic merge patch on our kinds', () => {
  const deploymentSchema = builtinSchemas.kindSchema({ group: 'apps', version: 'v1', kind: 'Deployment' }) as Schema;
  const podSchema = builtinSchemas.kindSchema({ group: '', version: 'v1', kind: 'Pod' }) as Schema;
  const live = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' }, annotations: { a: '1' }, finalizers: ['x/a', 'x/b'] },
    spec: {
      replicas: 1,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        spec: {
          containers: [
            { name: 'web', image: 'nginx:1.25', ports: [{ containerPort: 80, protocol: 'TCP' }], env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] },
            { name: 'sidecar', image: 'busybox' },
          ],
          volumes: [{ name: 'data', emptyDir: {} }],
          tolerations: [{ key: 'a', operator: 'Exists' }],
        },
      },
    },
  };

  it("applies kubectl apply's patch: containers merged by name in $setElementOrder's order", () => {
    const patch = {
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } },
      spec: { replicas: 3, template: { spec: { '$setElementOrder/containers': [{ name: 'web' }], containers: [{ image: 'nginx:1.26', name: 'web' }] } } },
    };
    const out = applyStrategicMergePatch(builtinSchemas, deploymentSchema, live, JSON.parse(JSON.stringify(patch))) as typeof live;
    expect(out.spec.replicas).toBe(3);
    expect(out.spec.template.spec.containers.map((c) => [c.name, c.image])).toEqual([['web', 'nginx:1.26'], ['sidecar', 'busybox']]);
    expect(out.spec.template.spec.containers[0]?.env).toEqual(live.spec.template.spec.containers[0]?.env);
    expect(out.metadata.annotations).toEqual({ a: '1', 'kubectl.kubernetes.io/last-applied-configuration': '{}' });
    expect(live.spec.replicas).toBe(1);
  });

  it('merges env by name, ports by containerPort, deletes by $patch and keeps atomic lists atomic', () => {
    const out = applyStrategicMergePatch(builtinSchemas, podSchema, { spec: live.spec.template.spec }, {
      spec: {
        containers: [
          { name: 'web', env: [{ name: 'B', value: '3' }, { name: 'C', value: '4' }, { name: 'A', $patch: 'delete' }], ports: [{ containerPort: 8080 }] },
          { name: 'sidecar', $patch: 'delete' },
        ],
        tolerations: [{ key: 'b', operator: 'Exists' }],
      },
    }) as { spec: typeof live.spec.template.spec };
    const web = out.spec.containers[0];
    expect(out.spec.containers.map((c) => c.name)).toEqual(['web']);
    expect(web?.env).toEqual([{ name: 'B', value: '3' }, { name: 'C', value: '4' }]);
    expect(web?.ports).toEqual([{ containerPort: 8080 }, { containerPort: 80, protocol: 'TCP' }]);
    expect(out.spec.tolerations).toEqual([{ key: 'b', operator: 'Exists' }]);
  });

  it('handles finalizers as a merge set, $deleteFromPrimitiveList and null deletes', () => {
    const out = applyStrategicMergePatch(builtinSchemas, deploymentSchema, live, {
      metadata: { finalizers: ['x/c', 'x/a'], '$deleteFromPrimitiveList/finalizers': ['x/b'], labels: { app: null, tier: 'web' } },
      spec: { replicas: null },
    }) as { metadata: { finalizers: string[]; labels: Record<string, string> }; spec: Record<string, unknown> };
    expect(out.metadata.finalizers).toEqual(['x/c', 'x/a']);
    expect(out.metadata.labels).toEqual({ tier: 'web' });
    expect('replicas' in out.spec).toBe(false);
  });

  it('retains only the listed keys of a Deployment strategy ($retainKeys), as kubectl does when switching to Recreate', () => {
    const out = applyStrategicMergePatch(builtinSchemas, deploymentSchema, live, {
      spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } },
    }) as { spec: { strategy: unknown } };
    expect(out.spec.strategy).toEqual({ type: 'Recreate' });
  });

  it('replaces a volume source with retainKeys on the volumes list and replaces maps with $patch: replace', () => {
    const out = applyStrategicMergePatch(builtinSchemas, podSchema, { metadata: { labels: { a: '1', b: '2' } }, spec: live.spec.template.spec }, {
      metadata: { labels: { $patch: 'replace', c: '3' } },
      spec: { volumes: [{ name: 'data', $retainKeys: ['name', 'configMap'], configMap: { name: 'cfg' } }] },
    }) as { metadata: { labels: unknown }; spec: { volumes: unknown } };
    expect(out.metadata.labels).toEqual({ c: '3' });
    expect(out.spec.volumes).toEqual([{ name: 'data', configMap: { name: 'cfg' } }]);
  });

  it("answers Kubernetes' errors with its statuses", () => {
    const code = (patch: unknown): [string, number, string] => {
      try {
        applyStrategicMergePatch(builtinSchemas, podSchema, { spec: live.spec.template.spec }, patch);
      } catch (e) {
        if (isApiError(e)) return [e.code, e.status, e.message];
      }
      return ['', 0, ''];
    };
    expect(code([1])).toEqual(['SMP_BAD_REQUEST', 400, 'invalid JSON document']);
    expect(code({ spec: { $retainKeys: 'x' } })).toEqual(['SMP_BAD_REQUEST', 400, 'invalid patch format of retainKeys']);
    expect(code({ spec: { $retainKeys: ['a'], b: 1 } })).toEqual(['SMP_BAD_REQUEST', 400, 'invalid patch format of retainKeys']);
    expect(code({ spec: { '$setElementOrder': [] } })).toEqual(['SMP_BAD_REQUEST', 400, 'invalid patch format of setElementOrder list']);
    expect(code({ spec: { $deleteFromPrimitiveList: [] } })).toEqual(['SMP_BAD_REQUEST', 400, 'invalid patch format of primitive list']);
    expect(code({ spec: { containers: [{ image: 'x' }] } })).toEqual(['SMP_FAILED', 500, 'map: map[image:x] does not contain declared merge key: name']);
    expect(code({ spec: { containers: [{ name: 'web', $patch: 'merge' }] } })).toEqual(['SMP_FAILED', 500, 'merging lists cannot yet be specified in the patch']);
    expect(code({ spec: { $patch: 'explode' } })).toEqual(['SMP_FAILED', 500, 'unknown patch type: explode in map: map[$patch:explode]']);
    expect(code({ spec: { containers: [[1]] } })[2]).toMatch(/^list element types are not identical: \[\[map\[env:/);
    let listOfLists: unknown;
    try {
      applyStrategicMergePatch(builtinSchemas, podSchema, { spec: { containers: [] } }, { spec: { containers: [[1]] } });
    } catch (e) {
      listOfLists = e;
    }
    expect(isApiError(listOfLists) && [listOfLists.code, listOfLists.status, listOfLists.message]).toEqual([
      'SMP_UNPROCESSABLE', 422, 'the server rejected our request due to an error in our request',
    ]);
    expect(code({ spec: { tolerations: [{ key: 'x' }], volumes: [{ name: 'data', emptyDir: { medium: 'Memory' } }] } })[0]).toBe('');
  });
});
