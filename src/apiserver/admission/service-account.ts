// ServiceAccount, its defaulting half only: a pod that names no service account runs as `default`, as
// Kubernetes' plugin sets it. Not done here (said in docs/admission.md): the check that the account exists,
// and mounting its token; Setpoint issues no service account tokens.
import type { AdmissionPlugin } from './admission-chain.js';
import { isPodRequest, podSpecOf } from './default-toleration-seconds.js';

export const SERVICE_ACCOUNT = 'ServiceAccount';
export const DEFAULT_SERVICE_ACCOUNT = 'default';
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

export function serviceAccountPlugin(): AdmissionPlugin {
  return {
    name: SERVICE_ACCOUNT,
    handles: (attrs) => isPodRequest(attrs) && attrs.operation === 'CREATE',
    admit(_attrs, obj) {
      if (obj === undefined) return;
      const annotations = obj.metadata['annotations'];
      // Mirror pods (a node's static pods) are left as they are, as Kubernetes leaves them.
      if (typeof annotations === 'object' && annotations !== null && MIRROR_POD_ANNOTATION in annotations) return;
      const spec = podSpecOf(obj);
      const name = typeof spec['serviceAccountName'] === 'string' && spec['serviceAccountName'] !== '' ? spec['serviceAccountName'] : '';
      const deprecated = typeof spec['serviceAccount'] === 'string' ? spec['serviceAccount'] : '';
      const chosen = name !== '' ? name : deprecated !== '' ? deprecated : DEFAULT_SERVICE_ACCOUNT;
      spec['serviceAccountName'] = chosen;
      // v1 shows the deprecated field beside it, as Kubernetes' conversion fills it.
      if (deprecated === '') spec['serviceAccount'] = chosen;
    },
  };
}
