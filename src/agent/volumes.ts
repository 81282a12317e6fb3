// Volumes as directories of the pod sandbox: <pod dir>/volumes/<name>/. emptyDir is an empty directory
// that lives as long as the pod; configMap, secret and downwardAPI volumes are written out as files (items
// choose keys and paths, modes from the item or defaultMode, 0644 by default) and rewritten on each sync,
// so an update reaches running containers as it does in Kubernetes.
//
// How a container finds them (no mount namespaces without root): each container has a root directory,
// <pod dir>/root/<container>/, where every volumeMount appears at its mountPath as a symlink to the volume
// (or to its subPath), and an env var SETPOINT_VOLUME_<NAME> (the volume name upper-cased, every other
// character than A-Z0-9 turned into _) with the volume's absolute path. With hostMountPaths on, the agent
// also links the real mountPath when it does not exist yet and its parent is writable — for trying things
// out on a machine the pods may scribble on; it is off by default.
import { existsSync, lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync, unlinkSync, writeFileSync, chmodSync, renameSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import type { NodeFacts, PodInputs } from './pod-inputs.js';
import { configMapBytes, secretBytes } from './pod-inputs.js';
import { podFieldValue, resourceFieldValue } from './field-ref.js';
import type { Container, KeyToPath, Pod, Volume } from './pod-types.js';

const DEFAULT_MODE = 0o644;

/** A volume the pod cannot have yet: kubelet's FailedMount event, the pod stays ContainerCreating. */
export class VolumeError extends Error {
  readonly code = 'AGENT_VOLUME';
  constructor(
    readonly volume: string,
    detail: string,
  ) {
    super(`MountVolume.SetUp failed for volume "${volume}" : ${detail}`);
    this.name = 'VolumeError';
  }
}

export function volumeEnvName(volume: string): string {
  return `SETPOINT_VOLUME_${volume.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** A relative path that stays inside its directory, or undefined. */
function safeRelative(p: string): string | undefined {
  if (p === '' || isAbsolute(p)) return undefined;
  const n = normalize(p);
  if (n === '..' || n.startsWith(`..${sep}`)) return undefined;
  return n;
}

function writeFiles(dir: string, files: Map<string, { data: Buffer; mode: number }>): void {
  mkdirSync(dir, { recursive: true });
  for (const [rel, f] of files) {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, f.data, { mode: f.mode });
    chmodSync(tmp, f.mode); // writeFileSync's mode is masked by the umask
    renameSync(tmp, path);
  }
}

function projectKeys(
  volume: string,
  keys: Map<string, Buffer>,
  items: KeyToPath[] | undefined,
  defaultMode: number,
  kind: 'configmap' | 'secret',
  optional: boolean,
): Map<string, { data: Buffer; mode: number }> {
  const out = new Map<string, { data: Buffer; mode: number }>();
  if (!items || items.length === 0) {
    for (const [k, data] of keys) {
      const rel = safeRelative(k);
      if (rel) out.set(rel, { data, mode: defaultMode });
    }
    return out;
  }
  for (const it of items) {
    const data = keys.get(it.key);
    if (!data) {
      if (optional) continue;
      throw new VolumeError(volume, `${kind} references non-existent ${kind === 'secret' ? 'secret' : 'config'} key: ${it.key}`);
    }
    const rel = safeRelative(it.path);
    if (!rel) throw new VolumeError(volume, `invalid path ${JSON.stringify(it.path)}`);
    out.set(rel, { data, mode: it.mode ?? defaultMode });
  }
  return out;
}

export function volumeDir(podDir: string, volume: string): string {
  return join(podDir, 'volumes', volume);
}

/** Writes (or refreshes) every volume of the pod. Throws VolumeError for the first one it cannot set up. */
export async function materializeVolumes(pod: Pod, podDir: string, inputs: PodInputs, podIP: string, node: NodeFacts): Promise<void> {
  const ns = pod.metadata.namespace ?? 'default';
  for (const v of pod.spec.volumes ?? []) {
    const dir = volumeDir(podDir, v.name);
    if (v.configMap) {
      const name = v.configMap.name ?? '';
      const cm = await inputs.configMap(ns, name);
      if (!cm) {
        if (v.configMap.optional) {
          mkdirSync(dir, { recursive: true });
          continue;
        }
        throw new VolumeError(v.name, `configmap "${name}" not found`);
      }
      writeFiles(dir, projectKeys(v.name, configMapBytes(cm), v.configMap.items, v.configMap.defaultMode ?? DEFAULT_MODE, 'configmap', v.configMap.optional ?? false));
    } else if (v.secret) {
      const name = v.secret.secretName ?? '';
      const s = await inputs.secret(ns, name);
      if (!s) {
        if (v.secret.optional) {
          mkdirSync(dir, { recursive: true });
          continue;
        }
        throw new VolumeError(v.name, `secret "${name}" not found`);
      }
      writeFiles(dir, projectKeys(v.name, secretBytes(s), v.secret.items, v.secret.defaultMode ?? DEFAULT_MODE, 'secret', v.secret.optional ?? false));
    } else if (v.downwardAPI) {
      const files = new Map<string, { data: Buffer; mode: number }>();
      for (const it of v.downwardAPI.items ?? []) {
        const rel = safeRelative(it.path);
        if (!rel) throw new VolumeError(v.name, `invalid path ${JSON.stringify(it.path)}`);
        let value = '';
        try {
          if (it.fieldRef) value = podFieldValue(pod, it.fieldRef, podIP, node);
          else if (it.resourceFieldRef) value = resourceFieldValue(pod, it.resourceFieldRef, it.resourceFieldRef.containerName ?? '', node);
        } catch (err) {
          throw new VolumeError(v.name, (err as Error).message);
        }
        files.set(rel, { data: Buffer.from(value), mode: it.mode ?? v.downwardAPI.defaultMode ?? DEFAULT_MODE });
      }
      writeFiles(dir, files);
    } else {
      // emptyDir, and any kind this agent does not know, is an empty directory.
      mkdirSync(dir, { recursive: true });
    }
  }
}

function linkTo(path: string, target: string): void {
  try {
    const st = lstatSync(path);
    if (st.isSymbolicLink() && readlinkSync(path) === target) return;
    if (st.isSymbolicLink()) unlinkSync(path);
    else return; // something real is there: leave it
  } catch {
    // nothing there yet
  }
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

export interface ContainerFilesystem {
  /** The container's root directory: mounts appear under it at their mountPath. */
  readonly root: string;
  /** SETPOINT_VOLUME_* variables and SETPOINT_ROOT. */
  readonly env: Map<string, string>;
  /** Real mountPaths linked on the host (removed with the pod). */
  readonly hostLinks: string[];
}

export function containerFilesystem(pod: Pod, podDir: string, c: Container, hostMountPaths: boolean): ContainerFilesystem {
  const root = join(podDir, 'root', c.name);
  mkdirSync(root, { recursive: true });
  const env = new Map<string, string>([['SETPOINT_ROOT', root]]);
  const hostLinks: string[] = [];
  const known = new Set((pod.spec.volumes ?? []).map((v: Volume) => v.name));
  for (const m of c.volumeMounts ?? []) {
    if (!known.has(m.name)) continue; // validation rejects it; never link outside the sandbox for it
    const base = volumeDir(podDir, m.name);
    let target = base;
    if (m.subPath) {
      const rel = safeRelative(m.subPath);
      if (!rel) continue;
      target = join(base, rel);
      mkdirSync(target, { recursive: true });
    }
    env.set(volumeEnvName(m.name), target);
    const rel = safeRelative(m.mountPath.replace(/^\/+/, ''));
    if (rel) linkTo(join(root, rel), target);
    if (hostMountPaths && isAbsolute(m.mountPath) && !existsSync(m.mountPath) && existsSync(dirname(m.mountPath))) {
      try {
        symlinkSync(target, m.mountPath);
        hostLinks.push(m.mountPath);
      } catch {
        // not writable here: the root directory and the env var still lead to it
      }
    }
  }
  return { root, env, hostLinks };
}

/** Removes host links that still point into this pod's directory. */
export function removeHostLinks(links: readonly string[], podDir: string): void {
  for (const l of links) {
    try {
      if (readlinkSync(l).startsWith(podDir)) unlinkSync(l);
    } catch {
      // already gone
    }
  }
}

export function removePodDir(podDir: string): void {
  rmSync(podDir, { recursive: true, force: true });
}
