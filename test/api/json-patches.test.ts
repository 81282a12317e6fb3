// JSON merge patch against RFC 7386's examples (its appendix A) and the way Kubernetes' merge patch
// library treats nulls and non-object patches; JSON patch against RFC 6902's examples and Kubernetes'
// answers for bad patches (400, 413, and the generic 422).
import { describe, expect, it } from 'vitest';
import { isApiError } from '../../src/api/api-error.js';
import { applyJSONPatch, JSONPatchError, maxJSONPatchOperations } from '../../src/api/patch/json-patch.js';
import { applyMergePatch, createMergePatch } from '../../src/api/patch/merge-patch.js';

describe('JSON merge patch', () => {
  // RFC 7386 appendix A: [target, patch, result].
  const rfc: readonly (readonly [unknown, unknown, unknown])[] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [['a', 'b'], ['c', 'd'], ['c', 'd']],
    [{ a: 'b' }, ['c'], ['c']],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  it.each(rfc)('merges %j with %j', (target, patch, result) => {
    expect(applyMergePatch(target, patch)).toEqual(result);
  });

  it('prunes nulls inside objects of a replacing array, keeps null elements, and does not mutate its inputs', () => {
    const target = { metadata: { labels: { a: '1' } } };
    const patch = { spec: { list: [{ x: null, y: 1 }, null] }, metadata: { labels: { b: '2' } } };
    expect(applyMergePatch(target, patch)).toEqual({ metadata: { labels: { a: '1', b: '2' } }, spec: { list: [{ y: 1 }, null] } });
    expect(target).toEqual({ metadata: { labels: { a: '1' } } });
  });

  it('rejects a patch that is neither an object nor an array as Kubernetes does', () => {
    for (const p of [null, 5, 'x', true]) {
      let err: unknown;
      try {
        applyMergePatch({}, p);
      } catch (e) {
        err = e;
      }
      expect(isApiError(err) && [err.status, err.message]).toEqual([400, 'Invalid JSON Patch']);
    }
  });

  it('computes a merge patch that applies back (kubectl label style)', () => {
    const from = { metadata: { labels: { a: '1', b: '2' } }, spec: { replicas: 1 } };
    const to = { metadata: { labels: { a: '1', c: '3' } }, spec: { replicas: 2 } };
    const p = createMergePatch(from, to);
    expect(p).toEqual({ metadata: { labels: { b: null, c: '3' } }, spec: { replicas: 2 } });
    expect(applyMergePatch(from, p)).toEqual(to);
  });
});

describe('JSON patch', () => {
  const doc = { metadata: { name: 'x', labels: { app: 'web' } }, spec: { list: ['a', 'b'] } };

  it('applies RFC 6902 operations', () => {
    expect(applyJSONPatch(doc, [{ op: 'add', path: '/metadata/labels/tier', value: 'fe' }])).toMatchObject({ metadata: { labels: { app: 'web', tier: 'fe' } } });
    expect(applyJSONPatch(doc, [{ op: 'add', path: '/spec/list/1', value: 'x' }])).toMatchObject({ spec: { list: ['a', 'x', 'b'] } });
    expect(applyJSONPatch(doc, [{ op: 'add', path: '/spec/list/-', value: 'c' }])).toMatchObject({ spec: { list: ['a', 'b', 'c'] } });
    expect(applyJSONPatch(doc, [{ op: 'remove', path: '/metadata/labels/app' }])).toMatchObject({ metadata: { labels: {} } });
    expect(applyJSONPatch(doc, [{ op: 'replace', path: '/metadata/name', value: 'y' }])).toMatchObject({ metadata: { name: 'y' } });
    expect(applyJSONPatch(doc, [{ op: 'move', from: '/metadata/name', path: '/metadata/generateName' }])).toMatchObject({ metadata: { generateName: 'x' } });
    expect(applyJSONPatch(doc, [{ op: 'copy', from: '/spec/list/0', path: '/spec/list/-' }])).toMatchObject({ spec: { list: ['a', 'b', 'a'] } });
    expect(applyJSONPatch(doc, [{ op: 'test', path: '/metadata/name', value: 'x' }, { op: 'replace', path: '/metadata/name', value: 'z' }])).toMatchObject({ metadata: { name: 'z' } });
    expect(applyJSONPatch(doc, [{ op: 'add', path: '/metadata/annotations', value: { 'a~b': 'c' } }, { op: 'add', path: '/metadata/annotations/d~1e', value: 'f' }])).toMatchObject({
      metadata: { annotations: { 'a~b': 'c', 'd/e': 'f' } },
    });
    expect(doc.metadata.name).toBe('x');
  });

  it("answers bad patches as Kubernetes' patch handler does", () => {
    const fail = (p: unknown): unknown => {
      try {
        applyJSONPatch(doc, p);
      } catch (e) {
        return e;
      }
      return undefined;
    };
    const notList = fail({ op: 'add' });
    expect(isApiError(notList) && [notList.status, notList.message]).toEqual([400, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch']);
    const big = fail(Array.from({ length: maxJSONPatchOperations + 1 }, () => ({ op: 'test', path: '/metadata/name', value: 'x' })));
    expect(isApiError(big) && [big.status, big.reason, big.message]).toEqual([413, 'RequestEntityTooLarge', 'The allowed maximum operations in a JSON patch is 10000, got 10001']);
    for (const p of [
      [{ op: 'test', path: '/metadata/name', value: 'nope' }],
      [{ op: 'replace', path: '/spec/missing', value: 1 }],
      [{ op: 'remove', path: '/metadata/labels/nope' }],
      [{ op: 'bogus', path: '/a' }],
      [{ op: 'add', path: '/spec/list/9', value: 1 }],
    ]) {
      const e = fail(p);
      expect(e).toBeInstanceOf(JSONPatchError);
      expect(isApiError(e) && [e.status, e.reason, e.message]).toEqual([422, 'Invalid', 'the server rejected our request due to an error in our request']);
      expect((e as JSONPatchError).detail).toMatch(/^operation 0: /);
    }
  });
});
