import { defineConfig } from 'vitest/config';

/** Tests whose figures are timing bounds (T8's p99): they run alone, after every other file has finished. */
const ALONE = ['test/e2e/server-soak.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'suite', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], exclude: ALONE, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'alone', include: ALONE, sequence: { groupOrder: 1 } } },
    ],
  },
});
