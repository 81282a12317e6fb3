// Reading `-f FILE|DIR|-` (with -R into subfolders) as kubectl does: multi-document YAML or JSON, `List`s
// unrolled into their items, empty documents skipped, folders read in name order (.yaml, .yml, .json).
// Bad input is one readable line naming the file; nothing is sent until every file has parsed.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../client/kube-object.js';
import { CliError } from './cli-error.js';

export interface Manifest {
  readonly source: string;
  readonly object: KubeObject;
}

/** Bounds what one file may cost (kubectl has none; the API server refuses bodies over 3 MiB anyway). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;
const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

function filesOf(path: string, recursive: boolean, top: boolean): string[] {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new CliError('CLI_INPUT', `the path "${path}" does not exist`);
  }
  if (!st.isDirectory()) return top || EXTENSIONS.has(extname(path)) ? [path] : [];
  const out: string[] = [];
  for (const e of readdirSync(path, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const p = join(path, e.name);
    if (e.isDirectory()) {
      if (recursive) out.push(...filesOf(p, true, false));
    } else if (EXTENSIONS.has(extname(e.name))) out.push(p);
  }
  return out;
}

function readText(file: string, stdin: () => string): string {
  if (file === '-') return stdin();
  const size = statSync(file).size;
  if (size > MAX_FILE_BYTES) throw new CliError('CLI_INPUT', `error reading ${file}: ${size} bytes is over the limit of ${MAX_FILE_BYTES}`);
  return readFileSync(file, 'utf8');
}

export function parseManifests(text: string, source: string): Manifest[] {
  const out: Manifest[] = [];
  const docs = parseAllDocuments(text, { uniqueKeys: false });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const doc of list) {
    if (doc.errors.length > 0) {
      const first = doc.errors[0];
      throw new CliError('CLI_INPUT', `error parsing ${source}: ${first?.message.split('\n')[0]?.replace(/:$/, '') ?? 'invalid YAML'}`);
    }
    const v: unknown = doc.toJS({ maxAliasCount: 100 });
    if (v === null || v === undefined) continue;
    if (typeof v !== 'object' || Array.isArray(v)) throw new CliError('CLI_INPUT', `error parsing ${source}: a document is not an object`);
    const o = v as KubeObject;
    if (typeof o.kind === 'string' && o.kind.endsWith('List') && Array.isArray(o.items)) {
      for (const item of o.items as unknown[]) if (typeof item === 'object' && item !== null) out.push(checked(item as KubeObject, source));
      continue;
    }
    out.push(checked(o, source));
  }
  return out;
}

function checked(o: KubeObject, source: string): Manifest {
  if (typeof o.apiVersion !== 'string' || o.apiVersion === '') throw new CliError('CLI_INPUT', `error validating "${source}": apiVersion not set`);
  if (typeof o.kind !== 'string' || o.kind === '') throw new CliError('CLI_INPUT', `error validating "${source}": kind not set`);
  return { source, object: o };
}

export function readManifests(paths: readonly string[], recursive: boolean, stdin: () => string = () => readFileSync(0, 'utf8')): Manifest[] {
  if (paths.length === 0) throw new CliError('CLI_USAGE', 'must specify one of -f and -k');
  const out: Manifest[] = [];
  for (const p of paths) {
    const files = p === '-' ? ['-'] : filesOf(p, recursive, true);
    for (const f of files) out.push(...parseManifests(readText(f, stdin), f === '-' ? 'STDIN' : f));
  }
  if (out.length === 0) throw new CliError('CLI_INPUT', 'no objects passed to apply');
  return out;
}
