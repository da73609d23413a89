import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const WEB = fileURLToPath(new URL('../../web/', import.meta.url))

interface PackResult {
  name: string
  version: string
  size: number
  unpackedSize: number
  files: { path: string; size: number }[]
}

describe('the tryon-widget npm package', () => {
  it('packs only what a shop needs: the widget, its generated types, the README and package.json', async () => {
    // prepack generates types/tryon-widget.d.ts from the JSDoc with tsc, as `npm publish` would.
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json'], { cwd: WEB })
    const [pack] = JSON.parse(stdout.slice(stdout.indexOf('['))) as PackResult[]
    const manifest = JSON.parse(await readFile(`${WEB}package.json`, 'utf8'))

    expect(pack).toMatchObject({ name: 'tryon-widget', version: manifest.version })
    expect(pack.files.map((file) => file.path).sort()).toEqual(['README.md', 'package.json', 'tryon-widget.js', 'types/tryon-widget.d.ts'])
    expect(pack.files.find((file) => file.path === 'tryon-widget.js')!.size).toBe((await readFile(`${WEB}tryon-widget.js`)).byteLength)
    // 9 KB before the shopper's outcome words in two languages, the timed wait with Cancel and the camera input.
    expect(pack.size).toBeLessThan(16 * 1024)

    const types = await readFile(`${WEB}types/tryon-widget.d.ts`, 'utf8')
    expect(types).toContain('export class TryOnButton extends HTMLElement')
    expect(types).toContain('export function defaultEndpoint(scriptUrl: string): string | null;')
    expect(types).toContain('export type TryOnSuccess = {')
  }, 60_000)

  it('points every entry of its manifest at a file it packs, for bundlers, TypeScript and the CDNs', async () => {
    const manifest = JSON.parse(await readFile(`${WEB}package.json`, 'utf8'))
    const packed = ['./tryon-widget.js', './types/tryon-widget.d.ts', './package.json']
    expect(manifest.private).toBeUndefined()
    expect(manifest.type).toBe('module')
    for (const entry of [manifest.main, manifest.types, manifest.jsdelivr, manifest.unpkg]) expect(packed).toContain(entry)
    expect(manifest.exports['.']).toEqual({ types: './types/tryon-widget.d.ts', default: './tryon-widget.js' })
    expect(manifest.exports['./tryon-widget.js']).toEqual(manifest.exports['.'])
    // Importing the module defines <tryon-button>: bundlers must keep it.
    expect(manifest.sideEffects).toEqual(['./tryon-widget.js'])
    expect(manifest.dependencies).toBeUndefined()
  })
})
