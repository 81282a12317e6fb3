// Who made a request, as Kubernetes' user.Info says it: the name, a uid (from the token file), the groups
// (a certificate's O fields, the token file's fourth column) and the two groups every request gets.

export interface UserInfo {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
}

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';
/** The superuser group: exempt from the in-flight limits, as in Kubernetes. */
export const MASTERS_GROUP = 'system:masters';

export const ANONYMOUS: UserInfo = { name: ANONYMOUS_USER, uid: '', groups: [UNAUTHENTICATED_GROUP] };

/** An authenticated user with system:authenticated added, as Kubernetes' authentication filter adds it. */
export function authenticatedUser(name: string, uid: string, groups: readonly string[]): UserInfo {
  return { name, uid, groups: groups.includes(AUTHENTICATED_GROUP) ? [...groups] : [...groups, AUTHENTICATED_GROUP] };
}
