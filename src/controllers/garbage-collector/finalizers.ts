// The finalizers the API server sets for a propagationPolicy and the garbage collector clears, spelled
// as Kubernetes spells them (metav1.FinalizerOrphanDependents, FinalizerDeleteDependents).
export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
