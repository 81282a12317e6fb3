// Requests compared as the apply path can tell them apart: bytes as Buffers (a decoded entry's may be
// views or msgpack's Buffers), fields that are there but undefined dropped.
export function plain(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v);
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = plain(x);
    return out;
  }
  return v;
}
