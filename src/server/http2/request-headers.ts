// A request's header list turned into one header object, checked as RFC 9113 §8.2 and §8.3.1 ask (and as
// nghttp2 checks for Node's http2): field names are lowercase tokens, values hold no NUL, CR or LF and no
// whitespace at either end, pseudo-header fields are the request ones, each once and before the others,
// connection-specific fields are absent. A request that fails is malformed: its stream is reset with
// PROTOCOL_ERROR. Repeated names gather into an array in one pass (never copied as they grow).
import type { IncomingHttpHeaders } from 'node:http2';
import type { HeaderList } from './hpack.js';

/** RFC 9110 token characters, lowercase only (HTTP/2 field names must not hold uppercase). */
const NAME_CHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz") NAME_CHAR[c.charCodeAt(0)] = 1;

const PSEUDO = new Set([':method', ':scheme', ':authority', ':path']);
/** Connection-specific fields HTTP/2 forbids (§8.2.2). */
const CONNECTION_FIELDS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

function validName(name: string, from: number): boolean {
  if (name.length <= from) return false;
  for (let i = from; i < name.length; i++) if (NAME_CHAR[name.charCodeAt(i)] !== 1) return false;
  return true;
}

function validValue(v: string): boolean {
  const n = v.length;
  if (n === 0) return true;
  const a = v.charCodeAt(0);
  const z = v.charCodeAt(n - 1);
  if (a === 0x20 || a === 0x09 || z === 0x20 || z === 0x09) return false;
  for (let i = 0; i < n; i++) {
    const c = v.charCodeAt(i);
    if (c === 0 || c === 0x0a || c === 0x0d) return false;
  }
  return true;
}

/** The request's header object, or why the request is malformed. */
export function requestHeaders(fields: HeaderList): IncomingHttpHeaders | string {
  const out = Object.create(null) as IncomingHttpHeaders;
  let regularSeen = false;
  for (const [name, value] of fields) {
    if (!validValue(value)) return `invalid value for ${name || 'a field'}`;
    if (name.charCodeAt(0) === 0x3a) {
      if (regularSeen) return `${name} after a regular field`;
      if (!PSEUDO.has(name)) return `pseudo-header field ${name} in a request`;
      if (out[name] !== undefined) return `${name} twice`;
      out[name] = value;
      continue;
    }
    regularSeen = true;
    if (!validName(name, 0)) return name === '' ? 'empty field name' : 'invalid field name';
    if (CONNECTION_FIELDS.has(name)) return `connection-specific field ${name}`;
    if (name === 'te' && value !== 'trailers') return 'te other than trailers';
    const prev = out[name];
    if (prev === undefined) out[name] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[name] = [prev, value];
  }
  const method = out[':method'];
  if (method === undefined || method === '') return 'no :method';
  if (method === 'CONNECT') {
    if (out[':authority'] === undefined || out[':scheme'] !== undefined || out[':path'] !== undefined) return 'CONNECT needs :authority alone';
  } else if (out[':scheme'] === undefined || !out[':path']) return 'no :scheme or :path';
  return out;
}

/** A trailer section from a client: no pseudo-header fields, and the same field rules. */
export function trailersMalformed(fields: HeaderList): string | undefined {
  for (const [name, value] of fields) {
    if (name.charCodeAt(0) === 0x3a) return `pseudo-header field ${name} in trailers`;
    if (!validName(name, 0) || !validValue(value)) return 'invalid trailer field';
  }
  return undefined;
}
