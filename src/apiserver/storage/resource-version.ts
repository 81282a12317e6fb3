// resourceVersion as the storage reads it: the store's revision in decimal, '' (or absent) for "the latest,
// read through a quorum", and Kubernetes' message for anything else.
import { badRequest } from './errors.js';

/** undefined for '' or absent; otherwise the revision ('0' is 0: "any"). */
export function parseResourceVersion(rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  if (!/^\d{1,19}$/.test(rv) || !Number.isSafeInteger(Number(rv))) {
    // The text of APIObjectVersioner.ParseResourceVersion's error, as kube-apiserver wraps it.
    throw badRequest(`invalid resource version: resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": invalid syntax`);
  }
  return Number(rv);
}
