// /openapi/v3: the index of per-group-version documents and the documents themselves, from whatever
// the registry provides (a hook, since the schemas belong to the kinds). Each document's URL carries a
// hash of its content, as kube-apiserver's does, so clients cache it for as long as it is the same.
// /openapi/v2 is not served: kubectl asks for it in protobuf only and takes a 404 in its stride.
import { createHash } from 'node:crypto';
import { jsonReply, type Reply } from './reply.js';

/** The registry's hook: documents by group-version path (`api/v1`, `apis/apps/v1`). */
export interface OpenApiV3Source {
  documents(): ReadonlyMap<string, unknown>;
}

export const EMPTY_OPENAPI: OpenApiV3Source = { documents: () => new Map() };

interface Rendered {
  readonly body: string;
  readonly hash: string;
}

export class OpenApiV3 {
  private readonly rendered = new WeakMap<object, Rendered>();

  constructor(private readonly source: OpenApiV3Source) {}

  /** Documents are objects; a provider that hands out the same object gets it serialized once. */
  private render(doc: unknown): Rendered {
    const cacheable = typeof doc === 'object' && doc !== null;
    const hit = cacheable ? this.rendered.get(doc) : undefined;
    if (hit) return hit;
    const body = JSON.stringify(doc) + '\n';
    const r = { body, hash: createHash('sha512').update(body).digest('hex').toUpperCase() };
    if (cacheable) this.rendered.set(doc, r);
    return r;
  }

  index(): Reply {
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const [path, doc] of this.source.documents()) {
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${this.render(doc).hash}` };
    }
    return jsonReply(200, { paths });
  }

  /**
   * One document. With the current hash it is immutable (cache for a year); with an old one the client
   * is sent to the current URL (301); with none it is served uncached. Undefined: no such document.
   */
  document(path: string, hash: string | null): Reply | undefined {
    const doc = this.source.documents().get(path);
    if (doc === undefined) return undefined;
    const r = this.render(doc);
    if (hash === null || hash === '') return { code: 200, contentType: 'application/json', body: r.body, headers: { 'Cache-Control': 'no-cache, private', ETag: `"${r.hash}"` } };
    if (hash !== r.hash) {
      return { code: 301, contentType: 'text/plain; charset=utf-8', body: '', headers: { Location: `/openapi/v3/${path}?hash=${r.hash}` } };
    }
    return { code: 200, contentType: 'application/json', body: r.body, headers: { 'Cache-Control': 'public, immutable', Expires: new Date(Date.now() + 365 * 86_400_000).toUTCString(), ETag: `"${r.hash}"` } };
  }
}
