import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // Two files at a time: Vitest's default on 2 cores is one (cores - 1), and the whole run took 22 minutes of which
    // much is waiting on Postgres, a dev stack or a browser (2026-12-01: 1,192 s of tests, one after the other). Two
    // files share the cores, so a test's own time may double: the timeouts give it room (no test asserts a duration).
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'tests', include: ['tests/**/*.test.ts'] } },
      {
        // Billing once more through a real transaction pooler (PgBouncer) with prepared statements off,
        // as production reaches Postgres through Supabase's pooler on port 6543 (tests/support/pooler.ts).
        extends: true,
        test: {
          name: 'pooler',
          include: ['tests/integration/billing.test.ts', 'tests/e2e/tryon.billing.test.ts'],
          env: { TEST_POOLER: '1' },
        },
      },
    ],
  },
})
