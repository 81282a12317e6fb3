// Path elements of server-side apply's field paths (structured-merge-diff's fieldpath): a struct or map
// field (".spec"), an associative-list item by its keys ("[name=\"web\"]"), a set item by value
// ("[=\"x\"]") or a list index ("[0]"); with SMD's total order, its printed form (what conflict messages
// show) and the FieldsV1 key encoding ("f:spec", "k:{\"name\":\"web\"}", "v:\"x\"", "i:0").

export type PathElement =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'key'; readonly fields: readonly (readonly [string, unknown])[] }
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'index'; readonly index: number };

export type Path = readonly PathElement[];

export function fieldPE(name: string): PathElement {
  return { kind: 'field', name };
}

/** An associative-list key, its fields sorted by name as SMD sorts them. */
export function keyPE(fields: readonly (readonly [string, unknown])[]): PathElement {
  const sorted = [...fields].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { kind: 'key', fields: sorted };
}

export function valuePE(value: unknown): PathElement {
  return { kind: 'value', value };
}

export function indexPE(index: number): PathElement {
  return { kind: 'index', index };
}

const kindRank = (v: unknown): number => {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (v !== null && typeof v === 'object') return 4;
  return 5;
};

/** SMD's total order on values: numbers, strings, booleans, lists, maps, then null. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = kindRank(a);
  const rb = kindRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
    case 1:
      return (a as number | string) < (b as number | string) ? -1 : (a as number | string) > (b as number | string) ? 1 : 0;
    case 2:
      return a === b ? 0 : a === false ? -1 : 1;
    case 3: {
      const x = a as unknown[];
      const y = b as unknown[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
    }
    case 4: {
      const x = a as Record<string, unknown>;
      const y = b as Record<string, unknown>;
      const kx = Object.keys(x).sort();
      const ky = Object.keys(y).sort();
      for (let i = 0; i < Math.min(kx.length, ky.length); i++) {
        const k1 = kx[i] as string;
        const k2 = ky[i] as string;
        if (k1 !== k2) return k1 < k2 ? -1 : 1;
        const c = compareValues(x[k1], y[k2]);
        if (c !== 0) return c;
      }
      return kx.length === ky.length ? 0 : kx.length < ky.length ? -1 : 1;
    }
    default:
      return 0;
  }
}

const peRank = { field: 0, key: 1, value: 2, index: 3 } as const;

/** SMD's order on path elements: fields, then keys, values and indexes, each in their own order. */
export function comparePE(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return peRank[a.kind] < peRank[b.kind] ? -1 : 1;
  switch (a.kind) {
    case 'field': {
      const n = (b as { name: string }).name;
      return a.name < n ? -1 : a.name > n ? 1 : 0;
    }
    case 'key': {
      const bf = (b as { fields: readonly (readonly [string, unknown])[] }).fields;
      for (let i = 0; i < Math.min(a.fields.length, bf.length); i++) {
        const [na, va] = a.fields[i] as readonly [string, unknown];
        const [nb, vb] = bf[i] as readonly [string, unknown];
        if (na !== nb) return na < nb ? -1 : 1;
        const c = compareValues(va, vb);
        if (c !== 0) return c;
      }
      return a.fields.length === bf.length ? 0 : a.fields.length < bf.length ? -1 : 1;
    }
    case 'value':
      return compareValues(a.value, (b as { value: unknown }).value);
    case 'index': {
      const j = (b as { index: number }).index;
      return a.index === j ? 0 : a.index < j ? -1 : 1;
    }
  }
}

// SMD's value.ToString: strings quoted (Go %q), numbers and booleans plain, lists bracketed.
function valueString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`;
  if (typeof v === 'object') return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}=${valueString(x)}`).join('');
  return String(v);
}

/** The printed form: .spec, [name="web"], [="x"], [0]. */
export function peString(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`;
    case 'key':
      return `[${pe.fields.map(([k, v]) => `${k}=${valueString(v)}`).join(',')}]`;
    case 'value':
      return `[=${valueString(pe.value)}]`;
    case 'index':
      return `[${pe.index}]`;
  }
}

export function pathString(p: Path): string {
  return p.map(peString).join('');
}

// Go's json encoding as SMD writes key values: HTML-sensitive characters escaped.
const htmlChars = /[<>&\u2028\u2029]/;
const htmlCharsAll = /[<>&\u2028\u2029]/g;
function goJSON(v: unknown): string {
  const s = JSON.stringify(v);
  return htmlChars.test(s) ? s.replace(htmlCharsAll, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : s;
}

/** The FieldsV1 key of a path element. */
export function serializePE(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `f:${pe.name}`;
    case 'key':
      return `k:{${pe.fields.map(([k, v]) => `${goJSON(k)}:${goJSON(v)}`).join(',')}}`;
    case 'value':
      return `v:${goJSON(pe.value)}`;
    case 'index':
      return `i:${pe.index}`;
  }
}

export class FieldsV1Error extends Error {
  readonly code = 'FIELDS_V1_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'FieldsV1Error';
  }
}

/** Parses a FieldsV1 key; undefined for an unknown element type (SMD skips those). */
export function deserializePE(s: string): PathElement | undefined {
  if (s.length < 2) throw new FieldsV1Error('key must be 2 characters long:');
  if (s[1] !== ':') throw new FieldsV1Error(`missing colon: ${s}`);
  const body = s.slice(2);
  switch (s[0]) {
    case 'f':
      return fieldPE(body);
    case 'v':
      return valuePE(JSON.parse(body) as unknown);
    case 'k': {
      const obj = JSON.parse(body) as unknown;
      if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw new FieldsV1Error(`parsing key as path element: ${s}`);
      return keyPE(Object.entries(obj as Record<string, unknown>));
    }
    case 'i': {
      if (!/^-?[0-9]+$/.test(body)) throw new FieldsV1Error(`strconv.Atoi: parsing ${JSON.stringify(body)}: invalid syntax`);
      return indexPE(Number(body));
    }
    default:
      return undefined;
  }
}
