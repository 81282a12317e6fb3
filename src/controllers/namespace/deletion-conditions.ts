// The conditions a Terminating namespace carries while the namespace controller empties it, with
// Kubernetes' types, reasons and messages (pkg/controller/namespace/deletion), so `kubectl describe ns`
// says what is holding it up. Pure: built from one pass's report.
import type { StatusCondition } from '../status-conditions.js';

export interface ContentReport {
  /** Group versions whose discovery failed. */
  readonly discoveryFailures: readonly string[];
  /** Deletions or lists that failed, one message each. */
  readonly deleteFailures: readonly string[];
  /** Resource (`pods.`, `deployments.apps`) → objects still there. */
  readonly remaining: ReadonlyMap<string, number>;
  /** Finalizer → objects still carrying it. */
  readonly finalizers: ReadonlyMap<string, number>;
}

const join = (m: ReadonlyMap<string, number>, suffix: string): string =>
  [...m.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} has ${n} ${suffix}`)
    .join(', ');

export function deletionConditions(r: ContentReport): StatusCondition[] {
  const finalizerList = [...r.finalizers.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} in ${n} resource instances`)
    .join(', ');
  return [
    r.discoveryFailures.length > 0
      ? { type: 'NamespaceDeletionDiscoveryFailure', status: 'True', reason: 'DiscoveryFailed', message: `Discovery failed for some groups, ${r.discoveryFailures.length} failing: ${r.discoveryFailures.join(', ')}` }
      : { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
    { type: 'NamespaceDeletionGroupVersionParsingFailure', status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
    r.deleteFailures.length > 0
      ? { type: 'NamespaceDeletionContentFailure', status: 'True', reason: 'ContentDeletionFailed', message: `Failed to delete all resource types, ${r.deleteFailures.length} remaining: ${r.deleteFailures.join(', ')}` }
      : { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
    r.remaining.size > 0
      ? { type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${join(r.remaining, 'resource instances')}` }
      : { type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' },
    r.finalizers.size > 0
      ? { type: 'NamespaceFinalizersRemaining', status: 'True', reason: 'SomeFinalizersRemain', message: `Some content in the namespace has finalizers remaining: ${finalizerList}` }
      : { type: 'NamespaceFinalizersRemaining', status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
  ];
}
