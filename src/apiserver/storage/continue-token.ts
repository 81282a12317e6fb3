// Kubernetes' continue token: unpadded base64url of {"v":"meta.k8s.io/v1","rv":<list revision>,"start":<next
// key without the list's prefix>}. rv -1 means "go on at the latest revision" (the token handed out with an
// expired continue). The start key is cleaned as a path so a client cannot list above the prefix it asked for.
import { StorageError } from './interface.js';

const VERSION = 'meta.k8s.io/v1';

function invalid(detail: string): StorageError {
  return new StorageError('InvalidContinue', `invalid continue token: continue key is not valid${detail}`);
}

export function encodeContinue(key: string, prefix: string, revision: number): string {
  if (!key.startsWith(prefix) || key === prefix) {
    throw new Error(`unable to encode next field: the key and key prefix do not match ${prefix} ${key}`);
  }
  return Buffer.from(JSON.stringify({ v: VERSION, rv: revision, start: key.slice(prefix.length) })).toString('base64url');
}

/** Go's path.Clean for the absolute paths a start key becomes. */
function cleanPath(p: string): string {
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return '/' + out.join('/');
}

/** The key to go on from (under `prefix`) and the list's revision. */
export function decodeContinue(token: string, prefix: string): { startKey: string; revision: number } {
  const bad = /[^A-Za-z0-9_-]/.exec(token);
  if (bad) throw invalid(`: illegal base64 data at input byte ${bad.index}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch (e) {
    throw invalid(`: ${(e as Error).message}`);
  }
  const c = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { v?: unknown; rv?: unknown; start?: unknown };
  if (c.v !== VERSION) throw invalid(`: server does not recognize this encoded version ${typeof c.v === 'string' ? c.v : ''}`);
  if (typeof c.rv !== 'number' || !Number.isSafeInteger(c.rv) || c.rv === 0) throw invalid(': incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof c.start !== 'string' || c.start === '') throw invalid(': encoded start key empty (version meta.k8s.io/v1)');
  const key = c.start.startsWith('/') ? c.start : '/' + c.start;
  if (cleanPath(key) !== key) throw invalid(`: ${c.start}`);
  return { startKey: prefix + key.slice(1), revision: c.rv };
}
