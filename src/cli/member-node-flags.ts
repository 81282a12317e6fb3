// Node options for a store member's process. Under load a member has hundreds of requests in flight; with
// V8's default young generation (16 MiB semi-spaces) each scavenge found many of them still alive and
// copied them, some into the old generation. 64 MiB semi-spaces let them die young: under `etcdctl check
// perf --load=l` scavenges were 5x rarer with half the pause time in all, and a member used about 5% less
// CPU per write (A/B runs). The young generation also starts at that size: V8 otherwise starts it small
// and grows it only when much survives, so under a light but steady load (1000 watchers, 200 writes/s) a
// member scavenged four times a second, and the longer pauses set the watch latency's p99 (5.3–8.1 ms in
// four rounds, 4.7–6.5 ms starting at 64 MiB; etcd 4.7–5.3). The cost: up to 128 MiB more memory for an
// idle member once it has allocated that much. V8 reads these only at start-up, so they must be on the
// command line: here for the members Setpoint starts itself, and in the shebang of src/cli/main.ts for
// `setpoint store` run directly.
//
// --interrupt-budget=8192 (V8's default 67,584) lets a function be optimized after an eighth of the bytecode
// run. A member's request path at a steady, moderate rate (the API server's writes at 100/s) otherwise runs
// for long stretches in V8's baseline tier: its HTTP/2, gRPC and Raft functions are called a few hundred
// times a second each, often with changing shapes, and stay unoptimized. `npm run bench:txn` on a quiet
// machine (2026-12-03, two rounds): the leader's CPU per paced write 1.37–1.46 ms with it against 1.85–1.90
// without (followers 0.90–0.95 against 1.23–1.37), paced p99 9.4–9.6 ms against 13.6–14.7 (etcd 3.4: 4.2–5.4).
import { existsSync } from 'node:fs';

export const MEMBER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64', '--min-semi-space-size=64', '--interrupt-budget=8192'];

/** Where Debian and its kin put jemalloc's shared library (the `libjemalloc2` package). */
const JEMALLOC_PATHS: readonly string[] = [
  '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
  '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2',
  '/usr/lib64/libjemalloc.so.2',
  '/usr/lib/libjemalloc.so.2',
];

/**
 * The environment that gives a member's process its memory allocator: jemalloc, preloaded, where the system
 * has it. A member frees millions of small native buffers in bulk after a big request (the keys and values
 * LevelDB hands back, each its own allocation, freed by V8's garbage collector together); glibc's malloc
 * keeps them in its fastbins and walks them all at the next larger allocation (malloc_consolidate), inside
 * one call that held the loop 50-400 ms. jemalloc frees in constant time. `npm run bench:big` (500,000 keys,
 * 2026-12-04): longest holds 28 / 39 / 51 / 51 / 41 ms with it against 31 / 42 / 67 / 75 / 77 without, every
 * operation faster, and `npm run bench:etcd` no worse (docs/big-requests.md). Turning glibc's fastbins off
 * instead cost reads 10-30%.
 *
 * SETPOINT_MEMBER_MALLOC chooses: `jemalloc` (the default: used when found), `system` (glibc's malloc), or
 * the path of an allocator's shared library. A process started with LD_PRELOAD already set keeps it.
 */
export function memberAllocatorEnv(env: NodeJS.ProcessEnv = process.env, exists: (path: string) => boolean = existsSync): Record<string, string> {
  if (env.LD_PRELOAD) return {};
  const choice = env.SETPOINT_MEMBER_MALLOC ?? 'jemalloc';
  if (choice === 'system') return {};
  if (choice === 'jemalloc') {
    const lib = JEMALLOC_PATHS.find((p) => exists(p));
    return lib ? { LD_PRELOAD: lib } : {};
  }
  if (!exists(choice)) throw new Error(`SETPOINT_MEMBER_MALLOC=${choice}: no such file (use jemalloc, system, or the path of an allocator's shared library)`);
  return { LD_PRELOAD: choice };
}
