import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['__tests__/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e tests start kubectl processes; two cores, so keep files from oversubscribing.
    maxWorkers: 2,
  },
});
