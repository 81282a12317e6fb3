// ControllerRefManager (k/k pkg/controller/controller_ref_manager.go): which objects a controller owns.
// An object whose controllerRef names the owner is kept while the selector still matches and released
// (its ownerReference removed) when it no longer does; an orphan that matches is adopted, but only after a
// fresh read of the owner shows it is the same object and not being deleted (canAdopt), so a controller
// never adopts for an owner that was deleted and recreated under the same name.
import { labelSelectorAsSelector, type LabelSelector } from '../api/label-selector.js';
import type { Selector } from '../api/labels-selector.js';
import { isNotFound } from '../client/api-status-error.js';
import type { KubeObject, OwnerReference } from '../client/kube-object.js';

export function controllerRefOf(o: KubeObject): OwnerReference | undefined {
  return (o.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
}

export function newControllerRef(owner: KubeObject, apiVersion: string, kind: string): OwnerReference {
  return { apiVersion, kind, name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** How the claim writes: a merge patch of metadata.ownerReferences guarded by the object's resourceVersion. */
export type OwnerPatcher = (namespace: string, name: string, patch: unknown) => Promise<unknown>;

export interface ClaimOptions<T extends KubeObject> {
  readonly owner: KubeObject;
  readonly ownerRef: OwnerReference;
  readonly selector: Selector;
  readonly patch: OwnerPatcher;
  /** Rechecks the owner against the API server once before the first adoption; throws when it may not adopt. */
  readonly canAdopt: () => Promise<void>;
  /** Objects that must not be adopted (a pod being deleted). */
  readonly adoptable?: (o: T) => boolean;
}

function ownerPatch(o: KubeObject, refs: readonly OwnerReference[]): unknown {
  return { metadata: { ownerReferences: refs.length > 0 ? refs : null, resourceVersion: o.metadata?.resourceVersion, uid: o.metadata?.uid } };
}

/** The objects the owner controls after adopting and releasing; errors are collected, the rest still claimed. */
export async function claimObjects<T extends KubeObject>(objs: readonly T[], opts: ClaimOptions<T>): Promise<{ claimed: T[]; errors: unknown[] }> {
  const claimed: T[] = [];
  const errors: unknown[] = [];
  const ownerUid = opts.owner.metadata?.uid;
  const ownerDeleting = Boolean(opts.owner.metadata?.deletionTimestamp);
  let adoptCheck: Promise<void> | undefined;
  for (const o of objs) {
    const ref = controllerRefOf(o);
    const matches = opts.selector.matches(o.metadata?.labels ?? {});
    const ns = o.metadata?.namespace ?? '';
    const name = o.metadata?.name ?? '';
    try {
      if (ref !== undefined) {
        if (ref.uid !== ownerUid) continue;
        if (matches || ownerDeleting) {
          claimed.push(o);
          continue;
        }
        const rest = (o.metadata?.ownerReferences ?? []).filter((r) => r.uid !== ownerUid);
        await opts.patch(ns, name, ownerPatch(o, rest)).catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        });
        continue;
      }
      if (ownerDeleting || !matches || o.metadata?.deletionTimestamp || (opts.adoptable && !opts.adoptable(o))) continue;
      adoptCheck ??= opts.canAdopt();
      await adoptCheck;
      await opts.patch(ns, name, ownerPatch(o, [...(o.metadata?.ownerReferences ?? []), opts.ownerRef]));
      claimed.push(o);
    } catch (e) {
      if (isNotFound(e)) continue;
      errors.push(e);
    }
  }
  return { claimed, errors };
}

/** The owner of `kind` that an object's controllerRef names, if the lister holds it with that uid. */
export function resolveControllerRef<T extends KubeObject>(o: KubeObject, kind: string, owners: { get(namespace: string, name: string): T | undefined }): T | undefined {
  const ref = controllerRefOf(o);
  if (ref === undefined || ref.kind !== kind) return undefined;
  const owner = owners.get(o.metadata?.namespace ?? '', ref.name);
  return owner !== undefined && owner.metadata?.uid === ref.uid ? owner : undefined;
}

/** The would-be owners in the object's namespace whose (non-empty, valid) selector matches its labels. */
export function ownersSelecting<T extends KubeObject>(o: KubeObject, candidates: readonly T[], selectorOf: (owner: T) => LabelSelector | undefined): T[] {
  return candidates.filter((c) => {
    try {
      const sel = labelSelectorAsSelector(selectorOf(c));
      return !sel.isEmpty() && sel.matches(o.metadata?.labels ?? {});
    } catch {
      return false;
    }
  });
}
