// Content negotiation as kube-apiserver does it: Accept ranges with Kubernetes' `g`, `v` and `as`
// parameters (a Table, an aggregated-discovery list) match only an offer carrying the same ones, so a
// plain `application/json` or `*/*` never gets a Table or an APIGroupDiscoveryList by accident — and a
// client that asks for one gets exactly the content type it parses (kubectl-wire.md §1, §2).

export interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  /** Parameters other than q, names lower-cased. */
  readonly params: ReadonlyMap<string, string>;
  readonly q: number;
}

/** The parameters that name a different representation, not a detail of the same one. */
const IDENTITY_PARAMS = ['g', 'v', 'as'] as const;

function parseOne(text: string): MediaRange | undefined {
  const [full, ...rawParams] = text.split(';');
  const [type, subtype] = (full ?? '').trim().toLowerCase().split('/');
  if (!type || !subtype) return undefined;
  const params = new Map<string, string>();
  let q = 1;
  for (const p of rawParams) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const k = p.slice(0, eq).trim().toLowerCase();
    const v = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
    if (k === 'q') {
      const n = Number(v);
      q = Number.isFinite(n) ? Math.min(Math.max(n, 0), 1) : 0;
    } else {
      params.set(k, v);
    }
  }
  return { type, subtype, params, q };
}

/** An Accept header as ranges, highest q first (the client's order among equals). No header is `*\/*`. */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === '') return [{ type: '*', subtype: '*', params: new Map(), q: 1 }];
  const ranges = header
    .split(',')
    .map(parseOne)
    .filter((r): r is MediaRange => r !== undefined && r.q > 0);
  return ranges.map((r, i) => ({ r, i })).sort((a, b) => b.r.q - a.r.q || a.i - b.i).map(({ r }) => r);
}

/** A Content-Type's media type, lower-cased and without parameters (`application/json`), or undefined. */
export function mediaTypeOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const t = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return t === '' ? undefined : t;
}

function matches(range: MediaRange, offer: MediaRange): boolean {
  if (range.type !== '*' && range.type !== offer.type) return false;
  if (range.subtype !== '*' && range.subtype !== offer.subtype) return false;
  for (const k of IDENTITY_PARAMS) {
    if ((range.params.get(k) ?? '') !== (offer.params.get(k) ?? '')) return false;
  }
  return true;
}

/**
 * The offer (a full media type with parameters, as it will be sent as Content-Type) that the first
 * acceptable range asks for, or undefined when none is acceptable (the caller answers 406).
 */
export function negotiate(accept: readonly MediaRange[], offers: readonly string[]): string | undefined {
  const parsed = offers.map((o) => ({ o, m: parseOne(o) }));
  for (const range of accept) {
    for (const { o, m } of parsed) if (m !== undefined && matches(range, m)) return o;
  }
  return undefined;
}
