import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const FUNCTION_DIR = 'supabase/functions/tryon-api'
const ENTRYPOINT = `${FUNCTION_DIR}/index.ts`
const DENO_JSON = `${FUNCTION_DIR}/deno.json`

/**
 * How `supabase functions deploy` finds the files to upload (supabase/cli internal/functions/deploy/upload.go,
 * walkImportPaths): from the entrypoint, every `import`/`export ... from '<x>'` and `import('<x>')` matched by
 * this pattern, after the import map's prefixes are substituted, that starts with ./, ../ or / and has a file
 * extension, relative to the importing file. Bare and npm: specifiers are left to the bundler and import map.
 * The Docker bundler bind-mounts the same walk (utils.BindHostModules).
 */
const CLI_IMPORT_PATTERN = /(?:import|export)\s+(?:{[^{}]+}|.*?)\s*(?:from)?\s*['"](.*?)['"]|import\(\s*['"](.*?)['"]\)/gi

async function filesTheCliUploads(entrypoint: string, importMap: Record<string, string>): Promise<Set<string>> {
  const seen = new Set<string>()
  const queue = [entrypoint]
  while (queue.length > 0) {
    const file = queue.pop()!
    if (seen.has(file)) continue
    seen.add(file)
    const source = await readFile(posix.join(root, file), 'utf8').catch(() => null)
    if (source === null) continue
    for (const match of source.matchAll(CLI_IMPORT_PATTERN)) {
      let specifier = (match[1] || match[2] || '').trim()
      for (const [prefix, target] of Object.entries(importMap)) {
        if (specifier.startsWith(prefix)) specifier = target + specifier.slice(prefix.length)
      }
      if (!specifier.startsWith('./') && !specifier.startsWith('../')) continue
      if (posix.extname(specifier) === '') continue
      queue.push(posix.normalize(posix.join(posix.dirname(file), specifier)))
    }
  }
  return seen
}

interface DenoGraph {
  modules: { specifier: string; error?: string }[]
  npmPackages: Record<string, unknown>
}

describe('the tryon-api function as the Supabase CLI deploys it', () => {
  let importMap: Record<string, string>
  let graph: DenoGraph

  beforeAll(async () => {
    importMap = JSON.parse(await readFile(posix.join(root, DENO_JSON), 'utf8')).imports
    // The module graph Deno builds from the function's own deno.json alone, as the edge runtime does.
    const { stdout } = await promisify(execFile)('node_modules/.bin/deno', ['info', '--json', '--config', DENO_JSON, ENTRYPOINT], {
      cwd: root,
      env: { ...process.env, DENO_NO_PACKAGE_JSON: '1', NO_COLOR: '1' },
      maxBuffer: 64 * 1024 * 1024,
    })
    graph = JSON.parse(stdout)
  }, 120_000)

  it('configures the function in supabase/config.toml: no JWT check, its entrypoint and deno.json', async () => {
    const config = await readFile(posix.join(root, 'supabase/config.toml'), 'utf8')
    const block = /^\[functions\.tryon-api\]\n((?:(?!\[).*\n?)*)/m.exec(config)?.[1] ?? ''
    const setting = (name: string) => new RegExp(`^${name}\\s*=\\s*(.+)$`, 'm').exec(block)?.[1].trim()
    expect(setting('verify_jwt')).toBe('false')
    expect(setting('entrypoint')).toBe('"./functions/tryon-api/index.ts"')
    expect(setting('import_map')).toBe('"./functions/tryon-api/deno.json"')
    // Paths in config.toml are relative to the supabase/ folder.
    expect(existsSync(posix.join(root, 'supabase', 'functions/tryon-api/index.ts'))).toBe(true)
    expect(existsSync(posix.join(root, 'supabase', 'functions/tryon-api/deno.json'))).toBe(true)
  })

  it('resolves every module from deno.json alone, with no package.json or node_modules', () => {
    expect(graph.modules.filter((m) => m.error)).toEqual([])
    const unmapped = graph.modules.map((m) => m.specifier).filter((s) => !/^(file|npm|node):/.test(s))
    expect(unmapped).toEqual([])
  })

  it('uploads every file of the module graph, all inside the project', async () => {
    const uploaded = await filesTheCliUploads(ENTRYPOINT, importMap)
    const local = graph.modules
      .map((m) => m.specifier)
      .filter((s) => s.startsWith('file://'))
      .map((s) => posix.relative(root, fileURLToPath(s)))
    expect(local.length).toBeGreaterThan(20)
    expect(local.filter((file) => !uploaded.has(file))).toEqual([])
    // The CLI reads files relative to the project; a path out of it fails to deploy (supabase/cli#3467).
    expect([...uploaded].filter((file) => file.startsWith('..'))).toEqual([])
  })

  it('type-checks with deno check from deno.json alone, as the edge runtime loads it', async () => {
    // tsc covers shared/ under Node's types; this covers the entry and everything it imports under Deno's.
    // A type error makes deno exit non-zero, which rejects with its diagnostics. (A cached check prints nothing.)
    const check = promisify(execFile)('node_modules/.bin/deno', ['check', '--config', DENO_JSON, ENTRYPOINT], {
      cwd: root,
      env: { ...process.env, DENO_NO_PACKAGE_JSON: '1', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    })
    await expect(check).resolves.toMatchObject({ stdout: '' })
  }, 180_000)

  it('pins each npm package to the version package.json installs for Node', async () => {
    const pkg = JSON.parse(await readFile(posix.join(root, 'package.json'), 'utf8'))
    const installed: Record<string, string> = { ...pkg.dependencies, ...pkg.devDependencies }
    for (const [name, target] of Object.entries(importMap)) {
      expect(target, name).toBe(`npm:${name}@${installed[name]}`)
    }
  })
})
