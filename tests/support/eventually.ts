/** Polls until `check` holds (no fixed sleeps): for work that finishes on its own schedule, e.g. a sweeper. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
