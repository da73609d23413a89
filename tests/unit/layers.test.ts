import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const IMPORT = /(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => normalize(join(folder, file)))
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

  it('keeps the function folder free of the dev stack', () => {
    const crossings = [...reachedFrom('supabase/functions/tryon-api/index.ts').keys()].filter((file) => file.startsWith('devstack/'))
    expect(crossings).toEqual([])
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
