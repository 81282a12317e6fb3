// The pod-template-hash: a Deployment names each ReplicaSet `<deployment>-<hash>` and labels it (and its
// selector and pods) with the hash, so ReplicaSets of different templates never select each other's pods.
// As Kubernetes' ComputeHash: FNV-1a (32 bit) over the template, then the collision count (little-endian
// uint32) when there is one, printed in decimal and each digit mapped through SafeEncodeString's alphabet
// (no vowels, no 0/1/3, so a hash never spells a word). Kubernetes hashes Go's printing of the struct; this
// hashes the template's canonical JSON, so the values differ from Kubernetes' but have the same shape.
import type { PodTemplate } from '../apps-types.js';

export const POD_TEMPLATE_HASH = 'pod-template-hash';

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** JSON with sorted keys and without undefined, so equal objects print equal. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJson(x))).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

function fnv1a32(bytes: Uint8Array, h = 0x811c9dc5): number {
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** rand.SafeEncodeString: each character of `s` mapped to the alphabet by its code. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += SAFE_ALPHABET[s.charCodeAt(i) % SAFE_ALPHABET.length];
  return out;
}

export function computeHash(template: PodTemplate, collisionCount?: number): string {
  let h = fnv1a32(new TextEncoder().encode(canonicalJson(template)));
  if (collisionCount !== undefined) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, collisionCount >>> 0, true);
    h = fnv1a32(b, h);
  }
  return safeEncodeString(String(h));
}

function withoutHash(t: PodTemplate | undefined): PodTemplate {
  const c = structuredClone(t ?? {});
  const labels = c.metadata?.labels;
  if (labels !== undefined) {
    delete labels[POD_TEMPLATE_HASH];
    if (Object.keys(labels).length === 0 && c.metadata !== undefined) delete c.metadata.labels;
  }
  if (c.metadata !== undefined && Object.keys(c.metadata).length === 0) delete c.metadata;
  return c;
}

/** EqualIgnoreHash: the two templates are the same but for the pod-template-hash label. */
export function equalIgnoreHash(a: PodTemplate | undefined, b: PodTemplate | undefined): boolean {
  return canonicalJson(withoutHash(a)) === canonicalJson(withoutHash(b));
}
