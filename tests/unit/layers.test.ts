import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const IMPORT = /(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.split(/[\\/]/).includes('node_modules'))
    .map((file) => normalize(join(folder, file)))
}

/** The source folders of the repository: the service, its entries and adapters, the tools and the tests. */
const SOURCE_FOLDERS = ['shared', 'supabase/functions', 'adapters', 'devstack', 'cli', 'workers', 'scripts', 'tests']

/** The files `file` imports by relative path (static, re-exported or dynamic), as paths from the repository's root. */
function importsOf(file: string): string[] {
  return [...readFileSync(join(root, file), 'utf8').matchAll(IMPORT)].map((match) => normalize(join(dirname(file), match[1] ?? match[2])))
}

/**
 * The import cycles among `files`, each as its files in order: the strongly connected components of the import graph
 * with more than one file, or a file importing itself (Tarjan's algorithm, an own walk rather than madge or
 * dependency-cruiser; type-only imports count, since they tie the files together for a reader just the same).
 */
function importCycles(files: string[]): string[][] {
  const known = new Set(files)
  const edges = new Map(files.map((file) => [file, importsOf(file).filter((target) => known.has(target))]))
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (file: string) => {
    index.set(file, index.size)
    low.set(file, index.get(file)!)
    stack.push(file)
    onStack.add(file)
    for (const target of edges.get(file)!) {
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file)!, low.get(target)!))
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    if (component.length > 1 || edges.get(file)!.includes(file)) cycles.push(component.sort())
  }
  for (const file of files) if (!index.has(file)) visit(file)
  return cycles
}

/** Every file `start` reaches through relative imports, each with the chain that reached it. */
function reachedFrom(start: string): Map<string, string[]> {
  const reached = new Map<string, string[]>([[start, [start]]])
  const queue = [start]
  while (queue.length > 0) {
    const file = queue.shift()!
    for (const match of readFileSync(join(root, file), 'utf8').matchAll(IMPORT)) {
      const target = normalize(join(dirname(file), match[1] ?? match[2]))
      if (reached.has(target)) continue
      reached.set(target, [...reached.get(file)!, target])
      queue.push(target)
    }
  }
  return reached
}

describe('the domain layers', () => {
  it('keeps engine/ and bridal/ free of the HTTP and billing layers, even through other modules', () => {
    const crossings: string[] = []
    for (const start of [...sourcesUnder('shared/engine'), ...sourcesUnder('shared/bridal')]) {
      for (const [file, chain] of reachedFrom(start)) {
        if (/^shared\/(http|billing)\//.test(file)) crossings.push(chain.join(' -> '))
      }
    }
    expect(crossings).toEqual([])
  })

  it('keeps tryon/, images/, bridal/, engine/ and billing/ free of the HTTP layer, even through other modules', () => {
    const domain = ['tryon', 'images', 'bridal', 'engine', 'billing'].flatMap((folder) => sourcesUnder(`shared/${folder}`))
    const crossings: string[] = []
    for (const start of domain) {
      for (const [file, chain] of reachedFrom(start)) {
        if (file.startsWith('shared/http/')) crossings.push(chain.join(' -> '))
      }
    }
    expect(crossings).toEqual([])
  })

  it('keeps the function folder free of the dev stack', () => {
    const crossings = [...reachedFrom('supabase/functions/tryon-api/index.ts').keys()].filter((file) => file.startsWith('devstack/'))
    expect(crossings).toEqual([])
  })
})

describe('the import graph', () => {
  it('lets nothing outside supabase/functions/ import from it: the function is an entry, not a library', () => {
    const outside = SOURCE_FOLDERS.filter((folder) => folder !== 'supabase/functions').flatMap(sourcesUnder)
    const crossings = outside.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith('supabase/functions/'))
        .map((target) => `${file} -> ${target}`),
    )
    expect(crossings).toEqual([])
  })

  it('has no import cycle among the source files (an own Tarjan walk over relative imports)', () => {
    // The product's code: the tests' own helpers (tests/support/scenes/ has a circle of its own) are not held to it yet.
    const product = SOURCE_FOLDERS.filter((folder) => folder !== 'tests').flatMap(sourcesUnder)
    expect(importCycles(product)).toEqual([])
  })
})

describe('the service code', () => {
  it('has no line over 140 characters, which Biome cannot wrap inside strings and comments', () => {
    const long = [...sourcesUnder('shared'), ...sourcesUnder('supabase/functions')].flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (line.length > 140 ? [`${file}:${i + 1} (${line.length})`] : [])),
    )
    expect(long).toEqual([])
  })
})
