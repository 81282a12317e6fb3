// The differential scripts' language: one etcdctl invocation per line, so adding a case is adding a line.
// The grammar is documented in scripts/README.md; this file only parses it.

export interface Modifiers {
  /** Compare output lines (and JSON arrays) as sets: the order follows member ids, which differ. */
  readonly sort: boolean;
  /** Repeat until etcdctl exits 0 (30 s at most), then compare the last run. */
  readonly retry: boolean;
  /** Repeat while the output contains this text (30 s at most), then compare the last run. */
  readonly retryWhile?: string;
  /** Run against one member only: a name, `leader` or `follower`. */
  readonly ep?: string;
  /** A divergence recorded in KNOWN-DIVERGENCES.md under this id: the outputs must still differ. */
  readonly known?: string;
  /** On a TLS cluster, run etcdctl without the client certificate flags (the step gives its own). */
  readonly noTls?: boolean;
}

export type Step =
  | { readonly kind: 'run'; readonly line: number; readonly text: string; readonly mods: Modifiers; readonly bg?: string; readonly args: string[]; readonly stdin?: string }
  | { readonly kind: 'write'; readonly line: number; readonly text: string; readonly name: string; readonly input: string }
  | { readonly kind: 'wait'; readonly line: number; readonly text: string; readonly name: string; readonly lines: number; readonly stop: boolean }
  | { readonly kind: 'member'; readonly line: number; readonly text: string; readonly action: 'start' | 'stop' | 'kill' | 'restart'; readonly name: string };

/** Shell-like words: whitespace separates, '…' is literal, "…" honours \" and \\. */
export function words(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated ' in: ${s}`);
      cur += s.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '"') {
      i++;
      while (i < s.length && s[i] !== '"') {
        if (s[i] === '\\' && i + 1 < s.length) i++;
        cur += s[i];
        i++;
      }
      if (i >= s.length) throw new Error(`unterminated " in: ${s}`);
      inWord = true;
    } else if (c === ' ' || c === '\t') {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}

/** The '…' after <<<: \n, \t, \\ and \' are escapes. */
function hereString(s: string): string {
  const m = /^'((?:[^'\\]|\\.)*)'$/.exec(s.trim());
  if (!m) throw new Error(`stdin must be one '…' string: ${s}`);
  return (m[1] as string).replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
}

export function parseScript(source: string): Step[] {
  const steps: Step[] = [];
  source.split('\n').forEach((raw, i) => {
    const line = i + 1;
    const text = raw.trim();
    if (text === '' || text.startsWith('#')) return;
    const fail = (why: string): never => {
      throw new Error(`line ${line}: ${why}: ${text}`);
    };
    const first = text[0];
    if (first === '>') {
      const m = /^>\s*(\S+)\s(.*)$/.exec(text) ?? fail('expected "> name text"');
      steps.push({ kind: 'write', line, text, name: m[1] as string, input: m[2] as string });
      return;
    }
    if (first === '~' || first === '=') {
      const m = /^[~=]\s*(\S+)\s+(\d+)$/.exec(text) ?? fail('expected "=name lines" or "~name lines"');
      steps.push({ kind: 'wait', line, text, name: m[1] as string, lines: Number(m[2]), stop: first === '=' });
      return;
    }
    if (first === '!') {
      const m = /^!(start|stop|kill|restart)\s+(\S+)$/.exec(text) ?? fail('expected "!start|stop|kill|restart name"');
      steps.push({ kind: 'member', line, text, action: m[1] as 'start' | 'stop' | 'kill' | 'restart', name: m[2] as string });
      return;
    }
    const here = text.indexOf(' <<< ');
    const cmd = here >= 0 ? text.slice(0, here) : text;
    const stdin = here >= 0 ? hereString(text.slice(here + 5)) : undefined;
    const ws = words(cmd);
    let sort = false;
    let retry = false;
    let noTls = false;
    let ep: string | undefined;
    let known: string | undefined;
    let retryWhile: string | undefined;
    let bg: string | undefined;
    while (ws.length > 0 && /^[@&]/.test(ws[0] as string)) {
      const w = ws.shift() as string;
      if (w === '@sort') sort = true;
      else if (w === '@retry') retry = true;
      else if (w === '@no-tls') noTls = true;
      else if (w.startsWith('@ep=')) ep = w.slice(4);
      else if (w.startsWith('@known=')) known = w.slice(7);
      else if (w.startsWith('@retry-while=')) retryWhile = w.slice(13);
      else if (w.startsWith('&')) bg = w.slice(1);
      else fail(`unknown modifier ${w}`);
    }
    if (ws.length === 0) fail('no etcdctl arguments');
    const mods: Modifiers = {
      sort,
      retry,
      ...(retryWhile !== undefined ? { retryWhile } : {}),
      ...(ep !== undefined ? { ep } : {}),
      ...(known !== undefined ? { known } : {}),
      ...(noTls ? { noTls } : {}),
    };
    steps.push({ kind: 'run', line, text, mods, args: ws, ...(bg !== undefined ? { bg } : {}), ...(stdin !== undefined ? { stdin } : {}) });
  });
  return steps;
}
