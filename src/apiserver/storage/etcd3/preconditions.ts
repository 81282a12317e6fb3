// DeleteOptions/UpdateOptions preconditions checked against the object as it is in the store, with the
// messages Kubernetes' storage.Preconditions.Check gives.
import { preconditionFailed } from '../errors.js';
import type { Preconditions, StoredObject } from '../interface.js';

export function checkPreconditions(key: string, p: Preconditions | undefined, obj: StoredObject | undefined): void {
  if (!p) return;
  const uid = obj?.metadata.uid ?? '';
  const rv = obj?.metadata.resourceVersion ?? '';
  if (p.uid !== undefined && p.uid !== uid) {
    throw preconditionFailed(key, `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${uid}`);
  }
  if (p.resourceVersion !== undefined && p.resourceVersion !== rv) {
    throw preconditionFailed(key, `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${rv}`);
  }
}
