// Objects as the store holds them: JSON without metadata.resourceVersion (the store's mod_revision is the
// resourceVersion, so storing it would only let the two disagree), given back on the way out.
import type { StoredObject } from '../interface.js';

export function encodeObject(obj: StoredObject): Buffer {
  if (obj.metadata.resourceVersion === undefined) return Buffer.from(JSON.stringify(obj));
  const { resourceVersion: _rv, ...metadata } = obj.metadata;
  return Buffer.from(JSON.stringify({ ...obj, metadata }));
}

export function decodeObject(key: Buffer | string, value: Buffer, modRevision: number): StoredObject {
  let obj: unknown;
  try {
    obj = JSON.parse(value.toString('utf8'));
  } catch (e) {
    throw new Error(`unable to decode ${key.toString()} from the store: ${(e as Error).message}`, { cause: e });
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw new Error(`unable to decode ${key.toString()} from the store: not a JSON object`);
  const o = obj as StoredObject;
  if (typeof o.metadata !== 'object' || o.metadata === null) o.metadata = {};
  o.metadata.resourceVersion = String(modRevision);
  return o;
}
