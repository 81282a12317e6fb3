// The `setpoint` program the harness starts, run by this Node. Compiled (bench, jepsen-lite, `setpoint up`)
// it is the main.js of the same build. From the sources (vitest) it is dist/src/cli/main.js of this
// checkout, refused with the command that fixes it when it is missing or older than the sources: a test
// must fail, never pass against code that is not the code under test, nor skip because it is absent.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

let checked: string | undefined;

/** The newest .ts file under `dir` and its modification time. */
function newest(dir: string): { file: string; mtimeMs: number } {
  let best = { file: '', mtimeMs: 0 };
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    const n = e.isDirectory() ? newest(p) : e.name.endsWith('.ts') ? { file: p, mtimeMs: statSync(p).mtimeMs } : undefined;
    if (n && n.mtimeMs > best.mtimeMs) best = n;
  }
  return best;
}

/** SETPOINT_MAIN names another build to run instead. */
export function setpointMain(): string {
  if (checked) return checked;
  const given = process.env.SETPOINT_MAIN;
  if (given !== undefined && given !== '') {
    if (!existsSync(given)) throw new Error(`SETPOINT_MAIN=${given} does not exist`);
    return (checked = given);
  }
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return (checked = fileURLToPath(new URL('../cli/main.js', import.meta.url)));
  // src/harness/setpoint-main.ts: the checkout is two folders up.
  const root = resolve(dirname(here), '..', '..');
  const main = join(root, 'dist', 'src', 'cli', 'main.js');
  const rebuild = 'run `npm run build` first (tests that start setpoint run the built program)';
  if (!existsSync(main)) throw new Error(`${main} is missing: ${rebuild}`);
  // tsc writes every output on each build: a source changed after main.js was written is not in it.
  const src = newest(join(root, 'src'));
  if (src.mtimeMs > statSync(main).mtimeMs) throw new Error(`${main} is older than ${src.file}: ${rebuild}`);
  return (checked = main);
}
