// What the garbage collector does with one dependent, given what it found out about each of its owners:
// Kubernetes' attemptToDeleteItem as a pure function. An owner is `solid` (it exists and is not waiting
// for its dependents), `dangling` (gone, or a different object under that name: another uid) or `waiting`
// (being deleted in the foreground).
import type { OwnerReference } from '../../client/kube-object.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from './finalizers.js';

export type OwnerState = 'solid' | 'dangling' | 'waiting';

export type DeletePolicy = 'Background' | 'Foreground' | 'Orphan';

export type GcAction =
  | { readonly kind: 'none' }
  /** Keep the object; drop the references to owners that are gone or waiting (it has a solid owner). */
  | { readonly kind: 'removeReferences'; readonly uids: readonly string[] }
  /** Delete the object with this propagation policy. */
  | { readonly kind: 'delete'; readonly policy: DeletePolicy }
  /**
   * Its owner waits for it, and it waits for a dependent that is itself deleting its dependents: a cycle
   * could hold both forever, so clear blockOwnerDeletion on its references first (then delete).
   */
  | { readonly kind: 'unblockThenDelete' };

export interface DependentFacts {
  readonly owners: readonly OwnerReference[];
  /** Owner uid → what the lookup found. */
  readonly ownerState: ReadonlyMap<string, OwnerState>;
  readonly hasDependents: boolean;
  /** One of its dependents is itself being deleted in the foreground. */
  readonly dependentDeletingDependents: boolean;
  readonly finalizers: readonly string[];
}

export function decide(f: DependentFacts): GcAction {
  if (f.owners.length === 0) return { kind: 'none' };
  const solid: string[] = [];
  const dangling: string[] = [];
  const waiting: string[] = [];
  for (const r of f.owners) {
    const s = f.ownerState.get(r.uid) ?? 'solid';
    (s === 'solid' ? solid : s === 'dangling' ? dangling : waiting).push(r.uid);
  }
  if (solid.length > 0) {
    if (dangling.length === 0 && waiting.length === 0) return { kind: 'none' };
    return { kind: 'removeReferences', uids: [...dangling, ...waiting] };
  }
  if (waiting.length > 0 && f.hasDependents) {
    return f.dependentDeletingDependents ? { kind: 'unblockThenDelete' } : { kind: 'delete', policy: 'Foreground' };
  }
  // No solid owner and nothing waits on its dependents: honour a policy already chosen for it.
  if (f.finalizers.includes(ORPHAN_FINALIZER)) return { kind: 'delete', policy: 'Orphan' };
  if (f.finalizers.includes(FOREGROUND_FINALIZER)) return { kind: 'delete', policy: 'Foreground' };
  return { kind: 'delete', policy: 'Background' };
}
