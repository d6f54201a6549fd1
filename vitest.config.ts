import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Each worker process runs file after file (its modules imported once): a fresh process per file spent some
    // 140 s of a run importing the service anew, a sixth of the suite's wall time on two workers. Every file starts
    // its own servers, databases and data directories, so nothing a test depends on is shared between files.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // End-to-end files each start servers and databases; two cores run two files at a time well.
    maxWorkers: 2,
  },
});
