// src/server/ is a folder per layer, and imports go one way (DESIGN.md): http2/ (HTTP/2 on the wire) below
// grpc/ (gRPC over it) below v3rpc/ (etcd's services) below embed/ (starting a member); peer/ (the peer
// transport) may use grpc/ and http2/ but never the client edge (v3rpc/, embed/); member/ (the Ready loop)
// imports none of them; auth/ (etcd's users, roles and tokens, which member/ applies and v3rpc/ checks)
// sits below both and imports no other folder. This test parses every file (so comments and strings never count), resolves each
// relative import, and fails on an import against the direction or a cycle between folders. It also
// holds bench/ to never importing test/.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const serverDir = join(root, 'src', 'server');

/** Every module specifier a source text imports or re-exports, in any form (types included). */
export function importsOf(fileName: string, text: string): string[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) out.push(n.moduleSpecifier.text);
    else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference) && ts.isStringLiteral(n.moduleReference.expression)) {
      out.push(n.moduleReference.expression.text);
    } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteral(n.arguments[0])) {
      out.push(n.arguments[0].text);
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) out.push(n.argument.literal.text);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return sources(p);
    return d.name.endsWith('.ts') ? [p] : [];
  });
}

/** The first path segment under `base`, or undefined when `file` is not under it. */
function folderUnder(base: string, file: string): string | undefined {
  const rel = relative(base, file);
  if (rel.startsWith('..') || rel === '') return undefined;
  const parts = rel.split(sep);
  return parts.length > 1 ? parts[0] : undefined;
}

interface Edge {
  readonly from: string;
  readonly to: string;
  /** The importing file and the specifier, for the failure message. */
  readonly where: string;
}

/** Folder-to-folder imports among `base`'s folders (a file's imports within its own folder are left out). */
function folderEdges(base: string, files: readonly string[]): Edge[] {
  const edges: Edge[] = [];
  for (const file of files) {
    const from = folderUnder(base, file);
    if (!from) continue;
    for (const spec of importsOf(file, readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const to = folderUnder(base, resolve(dirname(file), spec));
      if (to && to !== from) edges.push({ from, to, where: `${relative(root, file)} imports '${spec}'` });
    }
  }
  return edges;
}

/** The cycles of a folder graph, each as the folders on it (found by depth-first search). */
export function cycles(edges: readonly { from: string; to: string }[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const found = new Map<string, string[]>();
  const walk = (node: string, path: string[]): void => {
    const at = path.indexOf(node);
    if (at >= 0) {
      const cycle = path.slice(at);
      // One entry per cycle, whichever folder it was entered at.
      const start = cycle.indexOf([...cycle].sort()[0] as string);
      const key = [...cycle.slice(start), ...cycle.slice(0, start)];
      found.set(key.join(' -> '), key);
      return;
    }
    for (const to of next.get(node) ?? []) walk(to, [...path, node]);
  };
  for (const node of next.keys()) walk(node, []);
  return [...found.values()];
}

/** The edges that break a rule: `from` must import none of `forbidden`. */
function breaking(edges: readonly Edge[], from: string, forbidden: readonly string[]): string[] {
  return edges.filter((e) => e.from === from && forbidden.includes(e.to)).map((e) => e.where);
}

describe('the layers of src/server', () => {
  const edges = folderEdges(serverDir, sources(serverDir));

  it('finds the folders and their imports', () => {
    expect(new Set(edges.map((e) => e.from))).toEqual(new Set(['peer', 'grpc', 'v3rpc', 'gateway', 'embed', 'member']));
  });

  it('auth/ imports no other folder (member/ and v3rpc/ build on it)', () => {
    expect(edges.filter((e) => e.from === 'auth').map((e) => e.where)).toEqual([]);
  });

  it('has no cycle between folders', () => {
    const found = cycles(edges).map((c) => [...c, c[0]].join(' -> '));
    expect(found, edges.filter((e) => found.some((c) => c.includes(`${e.from} -> ${e.to}`))).map((e) => e.where).join('\n')).toEqual([]);
  });

  it('http2/ knows no gRPC, no etcd and no member: it imports no other folder', () => {
    expect(breaking(edges, 'http2', ['grpc', 'v3rpc', 'gateway', 'embed', 'peer', 'member'])).toEqual([]);
  });

  it('grpc/ sits on http2/ alone: no etcd services, no member, no peers, no embedding', () => {
    expect(breaking(edges, 'grpc', ['v3rpc', 'gateway', 'embed', 'peer', 'member'])).toEqual([]);
  });

  it('v3rpc/ never imports embed/, gateway/ or peer/', () => {
    expect(breaking(edges, 'v3rpc', ['embed', 'gateway', 'peer'])).toEqual([]);
  });

  it('gateway/ (the JSON gateway) sits beside the gRPC edge: it uses v3rpc/, never embed/, peer/ or member/', () => {
    expect(breaking(edges, 'gateway', ['embed', 'peer', 'member'])).toEqual([]);
  });

  it('peer/ never imports the client edge (v3rpc/, gateway/, embed/)', () => {
    expect(breaking(edges, 'peer', ['v3rpc', 'gateway', 'embed'])).toEqual([]);
  });

  it('member/ imports none of http2/, grpc/, v3rpc/, gateway/, peer/, embed/', () => {
    expect(breaking(edges, 'member', ['http2', 'grpc', 'v3rpc', 'gateway', 'peer', 'embed'])).toEqual([]);
  });
});

describe('bench/', () => {
  // Fails until the process-harness branch (issue 25 §4) moves the cluster helpers bench/etcd-bench.ts
  // takes from test/differential/ into a module of their own; this branch leaves that file alone.
  it('never imports test/ (fails until the process-harness change is merged)', () => {
    const testDir = join(root, 'test');
    const found = sources(join(root, 'bench')).flatMap((file) =>
      importsOf(file, readFileSync(file, 'utf8'))
        .filter((spec) => spec.startsWith('.') && !relative(testDir, resolve(dirname(file), spec)).startsWith('..'))
        .map((spec) => `${relative(root, file)} imports '${spec}'`),
    );
    expect(found).toEqual([]);
  });
});

/** Property accesses named in `names` (`x.raft`, `x.raftLog`, `x.lessor`), as file:line, code aside from comments and strings. */
export function reachIns(fileName: string, text: string, names: readonly string[]): string[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isPropertyAccessExpression(n) && names.includes(n.name.text)) {
      out.push(`${fileName}:${sf.getLineAndCharacterOfPosition(n.name.getStart(sf)).line + 1} .${n.name.text}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

// etcd-io/raft's Status() and the store's lease operations are how src/server asks the core and the store:
// the core's log and fields, and the store's lessor, stay theirs to change.
describe('src/server asks the core and the store through their methods', () => {
  it('never reaches into RawNode.raft, the raft log or the lessor', () => {
    const found = sources(serverDir).flatMap((file) => reachIns(relative(root, file), readFileSync(file, 'utf8'), ['raft', 'raftLog', 'lessor']));
    expect(found).toEqual([]);
  });
});

// The checker itself must be able to fail.
describe('the layer checker', () => {
  it('reads every form of import, and nothing in comments or strings', () => {
    const src = [
      "import { a } from './a.js';",
      "import type { B } from '../b/b.js';",
      "export { c } from './c.js';",
      "import d = require('./d.js');",
      "const e = await import('./e.js');",
      "type F = import('./f.js').F;",
      "// import { g } from './g.js';",
      "const h = \"import { h } from './h.js'\";",
    ].join('\n');
    expect(importsOf('x.ts', src)).toEqual(['./a.js', '../b/b.js', './c.js', './d.js', './e.js', './f.js']);
  });

  it('finds reach-ins through any receiver, and none in comments, strings or own names', () => {
    const src = ['node.raft.raftLog.applied;', 'this.kv.lessor.renew(x);', '// this.node.raft.term', "const s = 'kv.lessor';", 'const raft = 1; lessor(raft);'].join('\n');
    expect(reachIns('x.ts', src, ['raft', 'raftLog', 'lessor'])).toEqual(['x.ts:1 .raftLog', 'x.ts:1 .raft', 'x.ts:2 .lessor']);
  });

  it('finds a cycle of two folders and of three, once each, and none in a stack', () => {
    expect(cycles([{ from: 'a', to: 'b' }, { from: 'b', to: 'a' }])).toEqual([['a', 'b']]);
    expect(cycles([{ from: 'x', to: 'y' }, { from: 'y', to: 'z' }, { from: 'z', to: 'x' }, { from: 'z', to: 'w' }])).toEqual([['x', 'y', 'z']]);
    expect(cycles([{ from: 'embed', to: 'v3rpc' }, { from: 'v3rpc', to: 'grpc' }, { from: 'grpc', to: 'http2' }, { from: 'embed', to: 'http2' }])).toEqual([]);
  });
});
