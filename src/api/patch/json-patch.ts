// JSON patch (RFC 6902) through fast-json-patch, with Kubernetes' answers: a body that is not a list of
// operations is a 400 with Go's decode message, more than 10,000 operations a 413, and any operation
// that fails (a missing path, a failed test, an unknown op) the 422 Kubernetes gives, whose message
// hides the cause; the cause stays on the error for logs.

import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { ApiError } from '../api-error.js';

/** Kubernetes' limit on the operations of one JSON patch. */
export const maxJSONPatchOperations = 10000;

/** The message of a 422 from NewGenericServerResponse, which drops the server's detail. */
export const unprocessableMessage = 'the server rejected our request due to an error in our request';

export class JSONPatchError extends ApiError {
  /** Why the patch failed, for logs; the client sees only Kubernetes' generic message. */
  readonly detail: string;
  constructor(detail: string) {
    super('JSON_PATCH_FAILED', 'Invalid', unprocessableMessage);
    this.name = 'JSONPatchError';
    this.detail = detail;
  }
}

// How Go names a JSON value's type when decoding it into jsonpatch.Patch fails.
function goKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v === 'boolean' ? 'bool' : typeof v;
}

/** Checks the body is a list of operations, as evanphx's DecodePatch does; throws a 400 otherwise. */
export function decodeJSONPatch(patch: unknown): Operation[] {
  if (!Array.isArray(patch)) {
    throw new ApiError('JSON_PATCH_INVALID', 'BadRequest', `json: cannot unmarshal ${goKind(patch)} into Go value of type jsonpatch.Patch`);
  }
  for (const op of patch) {
    if (typeof op !== 'object' || op === null || Array.isArray(op)) {
      throw new ApiError('JSON_PATCH_INVALID', 'BadRequest', `json: cannot unmarshal ${goKind(op)} into Go value of type jsonpatch.Operation`);
    }
  }
  if (patch.length > maxJSONPatchOperations) {
    throw new ApiError(
      'JSON_PATCH_TOO_LARGE',
      'RequestEntityTooLarge',
      `The allowed maximum operations in a JSON patch is ${maxJSONPatchOperations}, got ${patch.length}`,
    );
  }
  return patch as Operation[];
}

/** Applies a JSON patch to a document, which is not mutated. */
export function applyJSONPatch(doc: unknown, patch: unknown): unknown {
  const ops = decodeJSONPatch(patch);
  try {
    return fastJsonPatch.applyPatch(doc, ops, true, false).newDocument;
  } catch (e) {
    const err = e as { name?: string; message?: string; index?: number };
    const first = (err.message ?? String(e)).split('\n')[0] ?? '';
    throw new JSONPatchError(err.index === undefined ? first : `operation ${err.index}: ${first}`);
  }
}
