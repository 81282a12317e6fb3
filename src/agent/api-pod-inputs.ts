// The runtime's PodInputs read from the API server: a ConfigMap or Secret that is not there is undefined
// (the runtime reports FailedMount / CreateContainerConfigError and tries again), any other failure throws
// and the runtime retries the pod at its next resync.
import { isNotFound } from '../client/api-status-error.js';
import type { KubeObject } from '../client/kube-object.js';
import { ResourceClient } from '../client/resource-client.js';
import { CONFIGMAPS, SECRETS } from '../client/resource-types.js';
import type { RestClient } from '../client/rest-client.js';
import type { ConfigMapData, PodInputs, SecretData } from './pod-inputs.js';

async function orUndefined<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

export function apiPodInputs(rest: RestClient): PodInputs {
  const configMaps = new ResourceClient<KubeObject>(rest, CONFIGMAPS);
  const secrets = new ResourceClient<KubeObject>(rest, SECRETS);
  return {
    async configMap(namespace, name) {
      const o = await orUndefined(configMaps.get(namespace, name));
      return o === undefined ? undefined : ({ data: o['data'], binaryData: o['binaryData'] } as ConfigMapData);
    },
    async secret(namespace, name) {
      const o = await orUndefined(secrets.get(namespace, name));
      return o === undefined ? undefined : ({ data: o['data'] } as SecretData);
    },
  };
}
