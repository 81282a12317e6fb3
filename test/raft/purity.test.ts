// The core must stay a pure state machine: no I/O, no timers, no clock, no ambient randomness. This test
// parses every file under src/raft/ (so comments and strings never count) and fails on any Node builtin
// import or any use of the globals that would smuggle time, I/O or randomness in.
import { readFileSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const coreDir = join(root, 'src', 'raft');

/** Globals that read the clock, schedule work, touch the process or the host, or are random. */
const FORBIDDEN_GLOBALS = new Set([
  'setTimeout',
  'setInterval',
  'setImmediate',
  'clearTimeout',
  'clearInterval',
  'clearImmediate',
  'queueMicrotask',
  'Date',
  'performance',
  'process',
  'Buffer',
  'require',
  'fetch',
  'crypto',
  'global',
  'globalThis',
  'window',
  'console',
]);

const BUILTINS = new Set(builtinModules.flatMap((m) => [m, m.replace(/\/.*$/, '')]));

function isBuiltinModule(spec: string): boolean {
  return spec.startsWith('node:') || BUILTINS.has(spec) || BUILTINS.has(spec.replace(/\/.*$/, ''));
}

/**
 * True when an identifier only names a property or member (`x.process`, `{ Date: 1 }`, `process() {}`),
 * rather than referring to a binding in scope.
 */
function isPropertyName(id: ts.Identifier): boolean {
  const p = id.parent;
  if (ts.isPropertyAccessExpression(p) && p.name === id) return true;
  if (ts.isQualifiedName(p) && p.right === id) return true;
  if (
    (ts.isPropertyAssignment(p) ||
      ts.isPropertyDeclaration(p) ||
      ts.isPropertySignature(p) ||
      ts.isMethodDeclaration(p) ||
      ts.isMethodSignature(p) ||
      ts.isGetAccessorDeclaration(p) ||
      ts.isSetAccessorDeclaration(p) ||
      ts.isEnumMember(p)) &&
    p.name === id
  ) {
    return true;
  }
  // `{ process: x } = obj` names the property; the binding is x.
  if (ts.isBindingElement(p) && p.propertyName === id) return true;
  return false;
}

interface Violation {
  readonly line: number;
  readonly what: string;
}

/** Finds impure imports and global uses in one source text. */
function findViolations(fileName: string, text: string): Violation[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const out: Violation[] = [];
  const at = (n: ts.Node): number => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const checkSpec = (n: ts.Node, spec: string): void => {
    if (isBuiltinModule(spec)) out.push({ line: at(n), what: `imports builtin module '${spec}'` });
    else if (!spec.startsWith('./') && !spec.startsWith('../')) {
      // A package could do I/O behind our back; the core only imports its own files.
      out.push({ line: at(n), what: `imports package '${spec}' (the core imports only relative modules)` });
    }
  };

  const visit = (n: ts.Node): void => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
      checkSpec(n, n.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) {
      const e = n.moduleReference.expression;
      if (ts.isStringLiteral(e)) checkSpec(n, e.text);
    } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) {
      out.push({ line: at(n), what: 'uses dynamic import()' });
    } else if (ts.isImportTypeNode(n)) {
      const arg = n.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) checkSpec(n, arg.literal.text);
    } else if (ts.isIdentifier(n)) {
      if (FORBIDDEN_GLOBALS.has(n.text) && !isPropertyName(n)) out.push({ line: at(n), what: `uses ${n.text}` });
      if (n.text === 'Math' && !isPropertyName(n)) {
        const p = n.parent;
        if (ts.isPropertyAccessExpression(p) && p.expression === n) {
          if (p.name.text === 'random') out.push({ line: at(n), what: 'uses Math.random' });
        } else if (ts.isElementAccessExpression(p) && p.expression === n) {
          // Math['random'] or Math[k]: cannot prove it is harmless.
          out.push({ line: at(n), what: 'uses Math[...] (computed access)' });
        } else {
          // Aliasing Math (`const m = Math`, `const { random } = Math`) hides later uses.
          out.push({ line: at(n), what: 'uses Math as a value' });
        }
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function coreFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return coreFiles(p);
    return d.name.endsWith('.ts') ? [p] : [];
  });
}

describe('purity of src/raft', () => {
  const files = coreFiles(coreDir);

  it('finds the core sources', () => {
    expect(files.map((f) => relative(coreDir, f))).toContain('types.ts');
  });

  for (const file of files) {
    it(`${relative(root, file)} has no I/O, timers, clock or ambient randomness`, () => {
      const found = findViolations(file, readFileSync(file, 'utf8')).map((v) => `${relative(root, file)}:${v.line} ${v.what}`);
      expect(found).toEqual([]);
    });
  }
});

// The checker itself must be able to fail, and must not trip on comments, strings or property names.
describe('purity checker', () => {
  const check = (src: string): string[] => findViolations('x.ts', src).map((v) => v.what);

  it('flags builtin and package imports in every form', () => {
    expect(check(`import { readFileSync } from 'node:fs';`)).toEqual([`imports builtin module 'node:fs'`]);
    expect(check(`import * as net from 'net';`)).toEqual([`imports builtin module 'net'`]);
    expect(check(`import type { Worker } from 'worker_threads';`)).toEqual([`imports builtin module 'worker_threads'`]);
    expect(check(`export { setTimeout } from 'node:timers/promises';`)).toEqual([
      `imports builtin module 'node:timers/promises'`,
      'uses setTimeout',
    ]);
    expect(check(`import fs = require('fs');`)).toEqual([`imports builtin module 'fs'`]);
    expect(check(`type T = import('http2').Http2Session;`)).toEqual([`imports builtin module 'http2'`]);
    expect(check(`const m = await import('./x.js');`)).toEqual(['uses dynamic import()']);
    expect(check(`import pino from 'pino';`)).toEqual([`imports package 'pino' (the core imports only relative modules)`]);
    expect(check(`import { msg } from './types.js';`)).toEqual([]);
  });

  it('flags timers, clock, process, Buffer and Math.random', () => {
    expect(check(`setTimeout(() => {}, 1);`)).toEqual(['uses setTimeout']);
    expect(check(`const t = Date.now();`)).toEqual(['uses Date']);
    expect(check(`const t = new Date();`)).toEqual(['uses Date']);
    expect(check(`const t = performance.now();`)).toEqual(['uses performance']);
    expect(check(`if (process.env.X) {}`)).toEqual(['uses process']);
    expect(check(`const b = Buffer.from('x');`)).toEqual(['uses Buffer']);
    expect(check(`const r = Math.random();`)).toEqual(['uses Math.random']);
    expect(check(`const r = Math['random']();`)).toEqual(['uses Math[...] (computed access)']);
    expect(check(`const { random } = Math;`)).toEqual(['uses Math as a value']);
    expect(check(`globalThis.setImmediate(f);`)).toEqual(['uses globalThis']);
  });

  it('ignores comments, strings, property names and harmless Math', () => {
    const src = [
      '// setTimeout, Date.now() and Math.random() would break determinism',
      "/* import fs from 'node:fs' */",
      "const s = 'process Buffer setInterval node:net';",
      'const t = `Date ${1}`;',
      'const o = { process: 1, Date: 2 };',
      'o.process = o.Date;',
      'class C { process(): void {} Date = 0; }',
      'interface I { Buffer: number; performance(): void }',
      'const { process: p } = o;',
      'const x = Math.floor(Math.max(1, 2)) + Math.imul(3, 4);',
    ].join('\n');
    expect(check(src)).toEqual([]);
  });
});
