// The steps every write runs, in Kubernetes' order, after the verb has built the object it wants to store:
// defaults (the fields they set recorded as stage 'defaulting'), mutating admission, validation (ObjectMeta
// and the kind's rules: 422 with causes), validating admission. The object then goes to the store.
import { FieldPath } from '../../api/field-path.js';
import { validateObjectMeta, validateObjectMetaUpdate, type ObjectMeta } from '../../api/object-meta-validation.js';
import type { AdmissionOperation } from '../admission/interface.js';
import type { StoredObject } from '../storage/interface.js';
import { changedPaths } from './changed-paths.js';
import type { GenericStore, WriteScope } from './generic-store.js';
import { invalid } from './registry-errors.js';
import { deepCopy } from './strategy.js';

export async function admitAndValidate(
  store: GenericStore,
  scope: WriteScope,
  operation: AdmissionOperation,
  obj: StoredObject,
  old: StoredObject | undefined,
): Promise<StoredObject> {
  const { strategy, ctx } = store;
  if (strategy.defaults) {
    const t0 = performance.now();
    const before = deepCopy(obj);
    strategy.defaults(obj);
    const paths = changedPaths(before, obj);
    if (paths.length > 0) scope.records.push({ stage: 'defaulting', plugin: 'defaults', allowed: true, changedPaths: paths, latencyMs: performance.now() - t0 });
  }
  const admitted = (await ctx.admission.admit(store.attributes(scope, operation, obj, old), scope.records)) ?? obj;
  const meta = admitted.metadata as ObjectMeta;
  const errs =
    old === undefined
      ? [...validateObjectMeta(meta, { namespaced: strategy.descriptor.namespaced, name: strategy.nameRule }), ...strategy.validate(admitted)]
      : [
          ...validateObjectMetaUpdate(meta, old.metadata as ObjectMeta, FieldPath.of('metadata')),
          // The kind's update rules guard the main resource; subresources (status, binding) have their own.
          ...(scope.subresource === '' ? strategy.validateUpdate(admitted, old) : []),
        ];
  if (errs.length > 0) throw invalid(store.gvk, meta.name ?? '', errs);
  await ctx.admission.validate(store.attributes(scope, operation, admitted, old), scope.records);
  return admitted;
}
