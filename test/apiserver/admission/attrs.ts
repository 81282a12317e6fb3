// AdmissionAttributes for unit tests of pure admission logic: a pod CREATE in namespace `ns` by an
// anonymous user, with whatever the test overrides.
import type { AdmissionAttributes } from '../../../src/apiserver/admission/interface.js';
import { ANONYMOUS } from '../../../src/apiserver/authn/user-info.js';

export function attrs(over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    resource: { group: '', version: 'v1', resource: 'pods' },
    subresource: '',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    namespace: 'ns',
    name: 'x',
    dryRun: false,
    user: ANONYMOUS,
    signal: new AbortController().signal,
    ...over,
  };
}
