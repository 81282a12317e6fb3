// Conditions as core/v1 keeps them (type, status, reason, message, lastTransitionTime): setting one
// keeps its lastTransitionTime unless its status changes, and a list rewritten with the same facts is
// the same list, so a controller writes status only when something really changed.

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface StatusCondition {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
  readonly [field: string]: unknown;
}

/** RFC 3339 to the second, as Kubernetes writes metav1.Time. */
export function rfc3339Seconds(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}

export function findCondition(list: readonly StatusCondition[] | undefined, type: string): StatusCondition | undefined {
  return (list ?? []).find((c) => c.type === type);
}

/** The list with `next` in place of the condition of its type (appended if absent). */
export function setCondition(list: readonly StatusCondition[] | undefined, next: StatusCondition, now: Date): StatusCondition[] {
  const old = findCondition(list, next.type);
  const merged: StatusCondition = {
    ...next,
    lastTransitionTime: old !== undefined && old.status === next.status && old.lastTransitionTime ? old.lastTransitionTime : rfc3339Seconds(now),
  };
  const out = (list ?? []).map((c) => (c.type === next.type ? merged : c));
  if (old === undefined) out.push(merged);
  return out;
}

/** True when the two lists say the same (times aside for fields the caller names). */
export function sameConditions(a: readonly StatusCondition[] | undefined, b: readonly StatusCondition[] | undefined, ignore: readonly string[] = []): boolean {
  const strip = (l: readonly StatusCondition[] | undefined): string =>
    JSON.stringify((l ?? []).map((c) => Object.fromEntries(Object.entries(c).filter(([k]) => !ignore.includes(k)))));
  return strip(a) === strip(b);
}
