// framework.Status: what a plugin answers at an extension point. Success is `null` on the hot paths
// (Filter, Score), as Go's nil status is, so a cycle over thousands of nodes allocates only for failures.

export type StatusCode =
  | 'Success'
  | 'Error'
  /** The pod does not fit now; preemption may help. */
  | 'Unschedulable'
  /** The pod does not fit and preemption cannot change that (a taint, a selector). */
  | 'UnschedulableAndUnresolvable'
  /** The plugin has nothing to do for this pod; its later extension points are skipped. */
  | 'Skip';

export class Status {
  /** The plugin that answered; set by the framework. */
  plugin = '';

  constructor(
    readonly code: StatusCode,
    readonly reasons: readonly string[] = [],
    /** Plain, JSON-able numbers behind the reasons (requested, allocatable, used; the skew), for `why`. */
    readonly details?: Readonly<Record<string, unknown>>,
  ) {}

  message(): string {
    return this.reasons.join(', ');
  }

  isUnschedulable(): boolean {
    return this.code === 'Unschedulable' || this.code === 'UnschedulableAndUnresolvable';
  }

  withPlugin(name: string): this {
    this.plugin = name;
    return this;
  }
}

export function unschedulable(reasons: string | readonly string[], details?: Readonly<Record<string, unknown>>): Status {
  return new Status('Unschedulable', typeof reasons === 'string' ? [reasons] : reasons, details);
}

export function unresolvable(reasons: string | readonly string[], details?: Readonly<Record<string, unknown>>): Status {
  return new Status('UnschedulableAndUnresolvable', typeof reasons === 'string' ? [reasons] : reasons, details);
}

export const skipStatus = new Status('Skip');

export function errorStatus(message: string): Status {
  return new Status('Error', [message]);
}
