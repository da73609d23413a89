import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
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
