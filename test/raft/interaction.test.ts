// Runs every scripted interaction in test/raft/interaction/*.txt against a fresh in-memory cluster and
// compares the transcript with the file. REWRITE=1 regenerates the expected output in place; review the
// diff before committing it, since a golden file that records wrong behaviour is worse than none.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InteractionEnv } from './helpers/interaction-env.js';
import { formatScript, parseScript, type ScriptLine } from './helpers/script.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'interaction');
const rewrite = process.env.REWRITE === '1';

function runScript(file: string, src: string): string {
  const env = new InteractionEnv();
  const out: ScriptLine[] = parseScript(src).map((s) => {
    if (s.kind === 'prose') return s;
    let output: string[];
    try {
      output = env.run(s.command);
    } catch (e) {
      throw new Error(`${file}:${s.line}: '${s.command}' failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
    for (const l of output) {
      if (l === '' || l.startsWith('#') || l.startsWith('$ ')) throw new Error(`${file}:${s.line}: output line would not parse back: '${l}'`);
    }
    return { ...s, output };
  });
  return formatScript(out);
}

describe('interaction scripts', () => {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .sort();

  it('has scripts to run', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  for (const f of files) {
    it(f, () => {
      const path = join(dir, f);
      const src = readFileSync(path, 'utf8');
      const got = runScript(f, src);
      if (rewrite) writeFileSync(path, got);
      else expect(got).toBe(src);
    });
  }
});
