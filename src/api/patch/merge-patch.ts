// JSON merge patch (RFC 7386) as Kubernetes applies it (evanphx/json-patch v4's MergePatch): objects
// merge key by key, null deletes, anything else replaces; a value that lands where nothing was has its
// nulls pruned; a patch that is an array replaces the document, and one that is neither is rejected with
// "Invalid JSON Patch". Inputs are not mutated; the result shares untouched subtrees with them.

import { ApiError } from '../api-error.js';

type JSONObject = Record<string, unknown>;

const isObject = (v: unknown): v is JSONObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** evanphx's errBadJSONPatch, answered as 400 BadRequest. */
export const badJSONPatchMessage = 'Invalid JSON Patch';

// evanphx's pruneNulls: drops null members of objects, recursively, also inside arrays (whose own null
// elements stay).
function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => (x === null ? null : pruneNulls(x)));
  if (!isObject(v)) return v;
  const out: JSONObject = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = pruneNulls(x);
  return out;
}

function mergeDocs(doc: JSONObject, patch: JSONObject): JSONObject {
  const out: JSONObject = { ...doc };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      delete out[k];
      continue;
    }
    const cur = out[k];
    if (cur === undefined || cur === null) out[k] = pruneNulls(v);
    else if (isObject(cur) && isObject(v)) out[k] = mergeDocs(cur, v);
    else out[k] = pruneNulls(v);
  }
  return out;
}

/** Applies a merge patch to a document (the live object). */
export function applyMergePatch(doc: unknown, patch: unknown): unknown {
  if (isObject(patch)) return isObject(doc) ? mergeDocs(doc, patch) : pruneNulls(patch);
  if (Array.isArray(patch)) return pruneNulls(patch);
  throw new ApiError('MERGE_PATCH_INVALID', 'BadRequest', badJSONPatchMessage);
}

/** The merge patch that turns `from` into `to` (what a client computes; used by tests and tools). */
export function createMergePatch(from: unknown, to: unknown): unknown {
  if (!isObject(from) || !isObject(to)) return to;
  const out: JSONObject = {};
  for (const k of Object.keys(from)) if (!(k in to)) out[k] = null;
  for (const [k, v] of Object.entries(to)) {
    const f = from[k];
    if (isObject(f) && isObject(v)) {
      const sub = createMergePatch(f, v) as JSONObject;
      if (Object.keys(sub).length > 0) out[k] = sub;
    } else if (JSON.stringify(f) !== JSON.stringify(v)) out[k] = v;
  }
  return out;
}
