// framework.Resource: a pod's requests or a node's allocatable as plain numbers (cpu in millicores,
// memory and ephemeral storage in bytes, extended resources in units), parsed from Quantities once so
// that a scheduling cycle compares numbers, never strings. computePodRequests is Kubernetes'
// resourcehelper.PodRequests: the containers' sum, raised to the largest init container's need (with the
// sidecars started before it), plus the pod's overhead.

import { Quantity } from '../api/quantity.js';
import type { Container, Node, Pod, ResourceList } from './api-types.js';

/** schedutil.DefaultMilliCPURequest and DefaultMemoryRequest: what a container without requests counts as for scoring. */
export const defaultMilliCPURequest = 100;
export const defaultMemoryRequest = 200 * 1024 * 1024;

export class Resource {
  milliCPU = 0;
  memory = 0;
  ephemeralStorage = 0;
  /** Only meaningful for allocatable: the node's pod capacity. */
  allowedPodNumber = 0;
  /** Extended resources and hugepages (nvidia.com/gpu, hugepages-2Mi, ...), absent when none. */
  scalar: Map<string, number> | undefined;

  clone(): Resource {
    const r = new Resource();
    r.milliCPU = this.milliCPU;
    r.memory = this.memory;
    r.ephemeralStorage = this.ephemeralStorage;
    r.allowedPodNumber = this.allowedPodNumber;
    if (this.scalar !== undefined) r.scalar = new Map(this.scalar);
    return r;
  }

  add(o: Resource, sign = 1): void {
    this.milliCPU += sign * o.milliCPU;
    this.memory += sign * o.memory;
    this.ephemeralStorage += sign * o.ephemeralStorage;
    if (o.scalar !== undefined) {
      this.scalar ??= new Map();
      for (const [k, v] of o.scalar) this.scalar.set(k, (this.scalar.get(k) ?? 0) + sign * v);
    }
  }

  /** Sets one named resource (the ResourceList key) to a value. */
  set(name: string, v: number): void {
    switch (name) {
      case 'cpu': this.milliCPU = v; break;
      case 'memory': this.memory = v; break;
      case 'ephemeral-storage': this.ephemeralStorage = v; break;
      case 'pods': this.allowedPodNumber = v; break;
      default:
        if (isScalarResourceName(name)) {
          this.scalar ??= new Map();
          this.scalar.set(name, v);
        }
    }
  }

  get(name: string): number {
    switch (name) {
      case 'cpu': return this.milliCPU;
      case 'memory': return this.memory;
      case 'ephemeral-storage': return this.ephemeralStorage;
      case 'pods': return this.allowedPodNumber;
      default: return this.scalar?.get(name) ?? 0;
    }
  }

  /** Raises each resource to at least o's (maxResourceList). */
  setMax(o: Resource): void {
    this.milliCPU = Math.max(this.milliCPU, o.milliCPU);
    this.memory = Math.max(this.memory, o.memory);
    this.ephemeralStorage = Math.max(this.ephemeralStorage, o.ephemeralStorage);
    if (o.scalar !== undefined) {
      this.scalar ??= new Map();
      for (const [k, v] of o.scalar) this.scalar.set(k, Math.max(this.scalar.get(k) ?? 0, v));
    }
  }

  isZero(): boolean {
    return this.milliCPU === 0 && this.memory === 0 && this.ephemeralStorage === 0 && (this.scalar === undefined || this.scalar.size === 0);
  }

  /** Plain data for diagnoses and logs, with Kubernetes' resource names. */
  toJSON(): Record<string, number> {
    const out: Record<string, number> = { cpu: this.milliCPU, memory: this.memory };
    if (this.ephemeralStorage !== 0) out['ephemeral-storage'] = this.ephemeralStorage;
    if (this.allowedPodNumber !== 0) out.pods = this.allowedPodNumber;
    for (const [k, v] of this.scalar ?? []) out[k] = v;
    return out;
  }
}

// v1helper.IsScalarResourceName: extended (a domain outside kubernetes.io), hugepages-*, attachable volumes.
export function isScalarResourceName(name: string): boolean {
  if (name.startsWith('hugepages-') || name.startsWith('attachable-volumes-')) return true;
  const slash = name.indexOf('/');
  if (slash < 0) return false;
  const domain = name.slice(0, slash);
  return !(domain === 'kubernetes.io' || domain.endsWith('.kubernetes.io')) && !name.startsWith('requests.');
}

function quantityNumber(name: string, v: string | number): number {
  const q = typeof v === 'number' ? Quantity.parse(String(v)) : Quantity.parse(v);
  return Number(name === 'cpu' ? q.milliValue() : q.value());
}

/** A ResourceList (strings like "500m", "1Gi") as a Resource; an unparseable quantity counts as zero. */
export function resourceFromList(list: ResourceList | null | undefined): Resource {
  const r = new Resource();
  if (list === null || list === undefined) return r;
  for (const [name, v] of Object.entries(list)) {
    let n = 0;
    try {
      n = quantityNumber(name, v);
    } catch {
      // The API server validated the object; a bad quantity here would be a stored object from before
      // validation existed, and Kubernetes' informer would have failed to decode it. Count it as zero.
    }
    r.set(name, n);
  }
  return r;
}

/** The requests a pod's scheduling and node accounting use: actual (for fit) and non-zero (for scoring). */
export interface PodRequests {
  readonly requests: Resource;
  /** cpu and memory with the scheduler's defaults for containers that request none (NonZeroRequested). */
  readonly nonZeroMilliCPU: number;
  readonly nonZeroMemory: number;
}

function containerRequests(c: Container, nonZero: boolean): Resource {
  const r = resourceFromList(c.resources?.requests);
  if (nonZero) {
    const req = c.resources?.requests ?? {};
    if (req.cpu === undefined) r.milliCPU = defaultMilliCPURequest;
    if (req.memory === undefined) r.memory = defaultMemoryRequest;
  }
  return r;
}

function podRequestsWith(pod: Pod, nonZero: boolean): Resource {
  const reqs = new Resource();
  for (const c of pod.spec.containers) reqs.add(containerRequests(c, nonZero));
  // InitContainerUse(i) = the sidecars started before i, plus i itself; the pod needs the largest of them.
  const sidecars = new Resource();
  const initMax = new Resource();
  for (const c of pod.spec.initContainers ?? []) {
    const r = containerRequests(c, nonZero);
    if (c.restartPolicy === 'Always') {
      reqs.add(r);
      sidecars.add(r);
      initMax.setMax(sidecars);
    } else {
      r.add(sidecars);
      initMax.setMax(r);
    }
  }
  reqs.setMax(initMax);
  if (pod.spec.overhead !== null && pod.spec.overhead !== undefined) reqs.add(resourceFromList(pod.spec.overhead));
  return reqs;
}

export function computePodRequests(pod: Pod): PodRequests {
  const requests = podRequestsWith(pod, false);
  const nz = podRequestsWith(pod, true);
  return { requests, nonZeroMilliCPU: nz.milliCPU, nonZeroMemory: nz.memory };
}

/** A node's allocatable, falling back to its capacity as the kubelet reports either. */
export function nodeAllocatable(node: Node): Resource {
  return resourceFromList(node.status?.allocatable ?? node.status?.capacity);
}
