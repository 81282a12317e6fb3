// The interaction script format: a terminal transcript. `$ command args` runs a command; the lines after it,
// up to the next blank line, are its expected output. Lines starting with `#` are commentary, kept as they are
// when the expected output is rewritten. Output never contains blank lines, `#` or `$ ` at column 0.
import type { NodeId } from '../../../src/raft/types.js';
import { isNodeId } from '../../../src/raft/types.js';

export type ScriptLine = { kind: 'prose'; text: string } | { kind: 'command'; line: number; command: string; output: string[] };

export function parseScript(src: string): ScriptLine[] {
  const lines = src.replace(/\n$/, '').split('\n');
  const out: ScriptLine[] = [];
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] as string;
    if (!text.startsWith('$ ')) {
      if (text !== '' && !text.startsWith('#')) throw new Error(`line ${i + 1}: expected '$ command', '#' or a blank line, got: ${text}`);
      out.push({ kind: 'prose', text });
      continue;
    }
    const output: string[] = [];
    while (i + 1 < lines.length && (lines[i + 1] as string) !== '' && !(lines[i + 1] as string).startsWith('$ ')) {
      output.push(lines[++i] as string);
    }
    out.push({ kind: 'command', line: i + 1 - output.length, command: text.slice(2).trim(), output });
  }
  return out;
}

export function formatScript(script: readonly ScriptLine[]): string {
  const lines: string[] = [];
  for (const s of script) {
    if (s.kind === 'prose') lines.push(s.text);
    else lines.push(`$ ${s.command}`, ...s.output);
  }
  return `${lines.join('\n')}\n`;
}

/** A parsed command: a verb, positional arguments and key=value options; `(1,2,3)` lists become arrays. */
export interface Command {
  readonly verb: string;
  readonly args: string[];
  readonly opts: Map<string, string>;
}

export function parseCommand(s: string): Command {
  // Keep parenthesised groups together even if they contain spaces: `partition (1) (2, 3)`.
  const tokens = s.match(/(?:[^\s(]+)?\([^)]*\)|\S+/g) ?? [];
  const [verb, ...rest] = tokens;
  if (verb === undefined) throw new Error('empty command');
  const args: string[] = [];
  const opts = new Map<string, string>();
  for (const t of rest) {
    const eq = t.indexOf('=');
    if (eq > 0 && !t.startsWith('(')) opts.set(t.slice(0, eq), t.slice(eq + 1));
    else args.push(t);
  }
  return { verb, args, opts };
}

/** `(1,2,3)` or `1` → [1n, 2n, 3n] / [1n]; `()` → []. */
export function parseIds(s: string): NodeId[] {
  const inner = s.replace(/^\(/, '').replace(/\)$/, '').trim();
  if (inner === '') return [];
  return inner.split(/[\s,]+/).map((x) => parseId(x, `'${s}'`));
}

/** A node id written in decimal (any uint64 other than 0). */
export function parseId(s: string | undefined, what: string): NodeId {
  const id = s !== undefined && /^[1-9]\d{0,19}$/.test(s) ? BigInt(s) : 0n;
  if (!isNodeId(id)) throw new Error(`${what}: bad node id '${String(s)}'`);
  return id;
}

export function parseInt10(s: string | undefined, what: string): number {
  const n = Number(s);
  if (s === undefined || !Number.isSafeInteger(n)) throw new Error(`${what}: expected an integer, got '${String(s)}'`);
  return n;
}
