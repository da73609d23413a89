/**
 * `npm run test:stress [-- --runs N] [--hogs K] [test files…]`: runs the fault, crash, concurrency and
 * soak-like tests N times (default 10) while K busy-looping processes (default: one per core) compete for
 * the CPU, and reports every failure. A test that passes only on an idle machine is a bug to fix at its cause.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const DEFAULT_FILES = [
  'tests/e2e/faults.test.ts',
  'tests/runtime/crash.test.ts',
  'tests/e2e/tryon.billing.test.ts',
  'tests/e2e/idempotency.test.ts',
  'tests/e2e/tryon.bridal.test.ts',
  'tests/integration/billing.test.ts',
]

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: process.env.STRESS_RUNS ?? '10' },
    hogs: { type: 'string', default: String(availableParallelism()) },
  },
})
const runs = Number(values.runs)
const hogCount = Number(values.hogs)
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(hogCount) || hogCount < 0) {
  console.error('usage: npm run test:stress -- [--runs N≥1] [--hogs K≥0] [test files…]')
  process.exit(2)
}
const files = positionals.length > 0 ? positionals : DEFAULT_FILES

interface VitestJson {
  numTotalTests: number
  numFailedTests: number
  testResults: {
    name: string
    status: string
    message?: string
    assertionResults: { fullName: string; status: string; failureMessages: string[] }[]
  }[]
}

/**
 * A busy loop per process: the tests get whatever CPU is left, as on a loaded CI machine. Each loop exits by
 * itself once this script is gone, however it ended.
 */
function startHogs(count: number): ChildProcess[] {
  const loop = `for (let i = 1; ; i++) if (i % 1e7 === 0 && process.ppid !== ${process.pid}) process.exit()`
  return Array.from({ length: count }, () => spawn(process.execPath, ['-e', loop], { stdio: 'ignore' }))
}

async function runOnce(outputFile: string): Promise<{ code: number | null; report: VitestJson | null; seconds: number }> {
  const started = performance.now()
  const child = spawn(
    process.execPath,
    ['node_modules/vitest/vitest.mjs', 'run', ...files, '--reporter=dot', '--reporter=json', `--outputFile.json=${outputFile}`],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  )
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  const report = await readFile(outputFile, 'utf8').then(
    (text) => JSON.parse(text) as VitestJson,
    () => null,
  )
  await rm(outputFile, { force: true })
  return { code, report, seconds: (performance.now() - started) / 1000 }
}

const firstLine = (text: string | undefined) => text?.split('\n')[0] ?? ''

const hogs = startHogs(hogCount)
const stopHogs = () => {
  for (const hog of hogs) hog.kill('SIGKILL')
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopHogs()
    process.exit(130)
  })
}

const scratch = await mkdtemp(join(tmpdir(), 'tryon-stress-'))
const failures = new Map<string, string[]>()
let greenRuns = 0
console.log(`test:stress: ${runs} runs of ${files.join(', ')} with ${hogCount} CPU hog(s) on ${availableParallelism()} cores`)
try {
  for (let run = 1; run <= runs; run++) {
    const { code, report, seconds } = await runOnce(join(scratch, `run-${run}.json`))
    const failed = report?.testResults.flatMap((file) => {
      const path = file.name.replace(`${process.cwd()}/`, '')
      const tests = file.assertionResults.filter((t) => t.status === 'failed')
      // A hook or an import that failed fails the whole file without failing any one test.
      if (tests.length === 0 && file.status === 'failed') return [{ test: `${path} (suite)`, why: firstLine(file.message) }]
      return tests.map((t) => ({ test: `${path} › ${t.fullName}`, why: firstLine(t.failureMessages[0]) }))
    }) ?? [{ test: '(no report)', why: `vitest exited with ${code}` }]
    if (code !== 0 && failed.length === 0)
      failed.push({ test: '(suite)', why: `vitest exited with ${code} (a file failed to load or a hook failed)` })
    for (const { test, why } of failed) failures.set(test, [...(failures.get(test) ?? []), `run ${run}: ${why}`])
    if (failed.length === 0) greenRuns++
    console.log(
      `run ${run}/${runs}: ${failed.length === 0 ? 'green' : `${failed.length} failed`}, ${report?.numTotalTests ?? '?'} tests, ${seconds.toFixed(0)} s`,
    )
    for (const { test, why } of failed) console.log(`  ✗ ${test}\n      ${why}`)
  }
} finally {
  stopHogs()
  await rm(scratch, { recursive: true, force: true })
}

console.log(`\n${greenRuns}/${runs} runs green`)
for (const [test, runsFailed] of failures) console.log(`✗ ${test}: failed ${runsFailed.length}×\n    ${runsFailed.join('\n    ')}`)
process.exit(greenRuns === runs ? 0 : 1)
