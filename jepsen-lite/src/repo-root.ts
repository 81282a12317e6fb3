// Finds the repository root from a module's location, so the same code works compiled (dist/jepsen-lite)
// and from source under vitest (jepsen-lite/src).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function repoRoot(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'proto', 'etcd', 'rpc.proto')) && existsSync(path.join(dir, 'jepsen-lite'))) return (cached = dir);
    const up = path.dirname(dir);
    if (up === dir) throw new Error('jepsen-lite: cannot find the repository root (proto/etcd/rpc.proto beside jepsen-lite/)');
    dir = up;
  }
}
