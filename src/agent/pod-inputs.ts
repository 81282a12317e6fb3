// What a pod needs from outside itself, asked through an interface its caller provides (the agent's glue
// reads them from the API server; tests hand in maps): ConfigMaps and Secrets, plus the node's facts.
// The shapes are the API objects' own data fields, so the glue passes them on untouched.

export interface ConfigMapData {
  data?: Record<string, string>;
  /** base64, as in the API. */
  binaryData?: Record<string, string>;
}

export interface SecretData {
  /** base64, as in the API. */
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export interface PodInputs {
  /** undefined when the ConfigMap does not exist. */
  configMap(namespace: string, name: string): Promise<ConfigMapData | undefined>;
  secret(namespace: string, name: string): Promise<SecretData | undefined>;
}

/** The node facts a pod can see: its host address and, for resourceFieldRef without a limit, allocatable. */
export interface NodeFacts {
  readonly nodeName: string;
  readonly hostIP: string;
  readonly allocatable: { readonly cpu: string; readonly memory: string; readonly 'ephemeral-storage'?: string };
}

/** A problem with a pod's configuration that kubelet reports as a waiting reason, not a crash. */
export class ContainerConfigError extends Error {
  readonly code = 'AGENT_CONTAINER_CONFIG';
  constructor(
    /** kubelet's waiting reason: CreateContainerConfigError, CreateContainerError, … */
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'ContainerConfigError';
  }
}

/** A Secret's values as bytes: data is base64; stringData (write-only in the API) wins if a caller keeps it. */
export function secretBytes(s: SecretData): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(s.data ?? {})) out.set(k, Buffer.from(v, 'base64'));
  for (const [k, v] of Object.entries(s.stringData ?? {})) out.set(k, Buffer.from(v, 'utf8'));
  return out;
}

export function configMapBytes(c: ConfigMapData): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(c.data ?? {})) out.set(k, Buffer.from(v, 'utf8'));
  for (const [k, v] of Object.entries(c.binaryData ?? {})) out.set(k, Buffer.from(v, 'base64'));
  return out;
}
