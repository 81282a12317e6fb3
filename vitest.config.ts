import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // At least two files at a time. Vitest's default (cores - 1) ran the suite one file at a time on a
    // 2-core machine (27 minutes in CI), while most of a file's time is spent waiting on the real processes
    // it starts (clusters, agents, kubectl).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
