// A container's environment as kubelet builds it: envFrom sources first, then env in order (later names
// win), each value expanded with $(VAR) over the variables defined before it; then command and args are
// expanded over the whole environment. A missing ConfigMap, Secret or key is CreateContainerConfigError
// with kubelet's message, unless the reference is optional.
import type { NodeFacts, PodInputs } from './pod-inputs.js';
import { ContainerConfigError, secretBytes } from './pod-inputs.js';
import { podFieldValue, resourceFieldValue } from './field-ref.js';
import type { Container, Pod } from './pod-types.js';

/** Kubernetes' $(VAR) expansion: $$ is a literal $, an unknown $(X) stays as written. */
export function expandVars(input: string, vars: ReadonlyMap<string, string>): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      continue;
    }
    const nx = input[i + 1];
    if (nx === '$') {
      out += '$';
      i++;
    } else if (nx === '(') {
      const end = input.indexOf(')', i + 2);
      if (end < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, end);
      const v = vars.get(name);
      out += v ?? `$(${name})`;
      i = end;
    } else {
      out += ch;
    }
  }
  return out;
}

export interface ResolvedCommand {
  readonly env: Map<string, string>;
  /** The program and its arguments, expanded; empty when the container names neither. */
  readonly argv: string[];
}

export async function resolveContainerEnv(
  pod: Pod,
  c: Container,
  inputs: PodInputs,
  podIP: string,
  node: NodeFacts,
): Promise<Map<string, string>> {
  const ns = pod.metadata.namespace ?? 'default';
  const env = new Map<string, string>();
  for (const src of c.envFrom ?? []) {
    const prefix = src.prefix ?? '';
    if (src.configMapRef) {
      const name = src.configMapRef.name ?? '';
      const cm = await inputs.configMap(ns, name);
      if (!cm) {
        if (src.configMapRef.optional) continue;
        throw new ContainerConfigError('CreateContainerConfigError', `configmap "${name}" not found`);
      }
      for (const [k, v] of Object.entries(cm.data ?? {})) env.set(prefix + k, v);
    }
    if (src.secretRef) {
      const name = src.secretRef.name ?? '';
      const s = await inputs.secret(ns, name);
      if (!s) {
        if (src.secretRef.optional) continue;
        throw new ContainerConfigError('CreateContainerConfigError', `secret "${name}" not found`);
      }
      for (const [k, v] of secretBytes(s)) env.set(prefix + k, v.toString('utf8'));
    }
  }
  for (const e of c.env ?? []) {
    const from = e.valueFrom;
    if (!from) {
      env.set(e.name, expandVars(e.value ?? '', env));
      continue;
    }
    if (from.fieldRef) {
      env.set(e.name, podFieldValue(pod, from.fieldRef, podIP, node));
    } else if (from.resourceFieldRef) {
      env.set(e.name, resourceFieldValue(pod, from.resourceFieldRef, c.name, node));
    } else if (from.configMapKeyRef) {
      const ref = from.configMapKeyRef;
      const name = ref.name ?? '';
      const cm = await inputs.configMap(ns, name);
      if (!cm) {
        if (ref.optional) continue;
        throw new ContainerConfigError('CreateContainerConfigError', `configmap "${name}" not found`);
      }
      const v = cm.data?.[ref.key] ?? (cm.binaryData?.[ref.key] !== undefined ? Buffer.from(cm.binaryData[ref.key] ?? '', 'base64').toString('utf8') : undefined);
      if (v === undefined) {
        if (ref.optional) continue;
        throw new ContainerConfigError('CreateContainerConfigError', `couldn't find key ${ref.key} in ConfigMap ${ns}/${name}`);
      }
      env.set(e.name, v);
    } else if (from.secretKeyRef) {
      const ref = from.secretKeyRef;
      const name = ref.name ?? '';
      const s = await inputs.secret(ns, name);
      if (!s) {
        if (ref.optional) continue;
        throw new ContainerConfigError('CreateContainerConfigError', `secret "${name}" not found`);
      }
      const v = secretBytes(s).get(ref.key);
      if (v === undefined) {
        if (ref.optional) continue;
        throw new ContainerConfigError('CreateContainerConfigError', `couldn't find key ${ref.key} in Secret ${ns}/${name}`);
      }
      env.set(e.name, v.toString('utf8'));
    }
  }
  return env;
}

/**
 * command + args, expanded. Kubernetes appends args to the image's entrypoint; there are no images here,
 * so args alone run as the command (what a runtime does for an image without an entrypoint), and a
 * container with neither cannot start: CreateContainerError "no command specified", as containerd says.
 */
export function containerArgv(c: Container, env: ReadonlyMap<string, string>): string[] {
  const argv = [...(c.command ?? []), ...(c.args ?? [])].map((a) => expandVars(a, env));
  if (argv.length === 0) throw new ContainerConfigError('CreateContainerError', 'no command specified');
  return argv;
}
