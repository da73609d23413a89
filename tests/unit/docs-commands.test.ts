import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { errorCatalogue } from '../../shared/http/errors.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')

/** The documentation a newcomer reads; every command shown in it must name something that exists. */
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  'web/README.md',
]

/** Where `npm` commands of a file run: web/README.md is the widget package's. */
const packageDirOf = (doc: string) => (doc.startsWith('web/') ? join(ROOT, 'web') : ROOT)

const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'console'])
/** npm's own commands; anything else after `npm` must be a script of package.json. */
const NPM_BUILTINS = new Set(['install', 'i', 'ci', 'publish', 'pack', 'exec', 'x', 'view', 'ls', 'outdated', 'update', 'audit', 'init'])
const NPM_LIFECYCLE = new Set(['test', 'start', 'stop', 'restart'])
/** Code that reads the environment; a TRYON_* variable named in the docs must be read somewhere in it. */
const CODE_DIRS = ['shared', 'devstack', 'cli', 'scripts', 'workers', 'supabase/functions']

interface Command {
  doc: string
  line: number
  text: string
}

/** A block's commands run one after another: a `cd` moves those after it. */
interface Shell {
  cwd: string
}

interface Block {
  doc: string
  language: string
  /** Line number of each line of the block, 1-based. */
  lines: { line: number; text: string }[]
}

function fencedBlocks(doc: string): Block[] {
  const blocks: Block[] = []
  let open: Block | undefined
  read(doc)
    .split('\n')
    .forEach((text, index) => {
      const fence = /^\s*```(\S*)\s*$/.exec(text)
      if (fence && !open) open = { doc, language: fence[1], lines: [] }
      else if (fence && open) {
        blocks.push(open)
        open = undefined
      } else open?.lines.push({ line: index + 1, text })
    })
  return blocks
}

/** The commands of a shell block: `\` continuations joined, comments dropped; in `console` only `$ ` lines. */
function commandsOf(block: Block): Command[] {
  const commands: Command[] = []
  let pending: Command | undefined
  for (const { line, text } of block.lines) {
    let body = text.trim()
    if (!pending) {
      if (block.language === 'console') {
        if (!body.startsWith('$ ')) continue
        body = body.slice(2)
      }
      if (body === '' || body.startsWith('#')) continue
    }
    body = body.replace(/\s+#\s.*$/, '')
    const continues = body.endsWith('\\')
    const part = continues ? body.slice(0, -1) : body
    pending = pending ? { ...pending, text: `${pending.text} ${part}` } : { doc: block.doc, line, text: part }
    if (!continues) {
      commands.push(pending)
      pending = undefined
    }
  }
  return commands
}

/** Splits a command line into words and the operators between commands, keeping quoted text and `$(…)` whole. */
function segmentsOf(text: string): string[][] {
  const segments: string[][] = [[]]
  let word = ''
  let quote: string | undefined
  let depth = 0
  const flush = () => {
    if (word) segments[segments.length - 1].push(word)
    word = ''
  }
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (quote) {
      if (char === quote) quote = undefined
      else word += char
    } else if (char === "'" || char === '"') quote = char
    else if (char === '$' && text[i + 1] === '(') {
      depth++
      word += '$('
      i++
    } else if (char === ')' && depth > 0) {
      depth--
      word += char
    } else if (depth === 0 && /\s/.test(char)) flush()
    else if (depth === 0 && (char === '|' || char === '&' || char === ';')) {
      flush()
      if (text[i + 1] === char) i++
      segments.push([])
    } else word += char
  }
  flush()
  return segments.filter((s) => s.length > 0)
}

/** `case 'keys create':` lines of the admin CLI: the commands it really has. */
const ADMIN_SOURCE = read('cli/admin.ts')
const ADMIN_COMMANDS = new Set([...ADMIN_SOURCE.matchAll(/case '([a-z]+(?: [a-z]+)?)':/g)].map((m) => m[1]))

function adminProblems(args: string[]): string[] {
  const problems: string[] = []
  const words = args.filter((a) => !a.startsWith('-') && !a.startsWith('['))
  const command = ADMIN_COMMANDS.has(`${words[0]} ${words[1]}`) ? `${words[0]} ${words[1]}` : words[0]
  if (!args.includes('--help') && !ADMIN_COMMANDS.has(command)) {
    problems.push(`the admin CLI has no command "${words.slice(0, 2).join(' ')}" (cli/admin.ts has: ${[...ADMIN_COMMANDS].join(', ')})`)
  }
  for (const flag of args.filter((a) => /^\[?--[a-z]/.test(a)).map((a) => a.replace(/^\[?--/, '').replace(/\]$/, ''))) {
    if (!ADMIN_SOURCE.includes(`'${flag}'`) && !ADMIN_SOURCE.includes(`${flag}:`) && !ADMIN_SOURCE.includes(`'--${flag}'`)) {
      problems.push(`the admin CLI has no option --${flag}`)
    }
  }
  return problems
}

const CODE_TEXT = CODE_DIRS.flatMap((dir) => sourceFiles(join(ROOT, dir)))
  .map((file) => readFileSync(file, 'utf8'))
  .join('\n')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path)
    return /\.(ts|js)$/.test(entry.name) ? [path] : []
  })
}

const scriptsOf = (dir: string): Record<string, string> => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts ?? {}
const REPO_PATH = /^(\.\/)?[\w.-]+(\/[\w.@-]+)+\.(ts|js|mjs|json|toml|sql|sh)$/

/** What is wrong with one command line, as messages; empty when everything it names exists. */
function problemsOf(command: Command, shell: Shell = { cwd: packageDirOf(command.doc) }): string[] {
  const problems = new Set<string>()
  const report = (problem: string) => problems.add(problem)
  const exists = (path: string) => existsSync(resolve(shell.cwd, path))
  const needFile = (path: string | undefined, what: string) => {
    if (!path) report(`${what} names no file`)
    else if (!exists(path)) report(`${path} does not exist (from ${relative(ROOT, shell.cwd) || '.'})`)
  }
  for (const variable of command.text.match(/\bTRYON_[A-Z0-9_]+/g) ?? []) {
    if (!CODE_TEXT.includes(variable)) report(`${variable} is read nowhere in ${CODE_DIRS.join(', ')}`)
  }
  for (const segment of segmentsOf(command.text)) {
    const words = segment.slice(segment.findIndex((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w)))
    const [program, ...args] = words
    for (const word of args) if (REPO_PATH.test(word) && !word.startsWith('.tryon/')) needFile(word, 'the path')
    if (program === 'cd') {
      shell.cwd = resolve(shell.cwd, args[0] ?? '.')
      if (!existsSync(shell.cwd) || !statSync(shell.cwd).isDirectory()) report(`cd ${args[0]}: no such folder`)
    } else if (program === 'npm') {
      const [sub, ...rest] = args.filter((a) => a !== '--silent' && a !== '-s')
      const scripts = scriptsOf(shell.cwd)
      const packageJson = relative(ROOT, join(shell.cwd, 'package.json'))
      if (sub === 'run' || sub === 'run-script') {
        const script = rest[0]
        if (!script || !(script in scripts)) report(`npm run ${script}: ${packageJson} has no script "${script}"`)
        if (script === 'admin') adminProblems(rest.slice(rest.indexOf('--') + 1)).forEach(report)
      } else if (NPM_LIFECYCLE.has(sub)) {
        if (!(sub in scripts)) report(`npm ${sub}: ${packageJson} has no script "${sub}"`)
      } else if (!NPM_BUILTINS.has(sub)) report(`npm ${sub}: neither an npm command nor a script of ${packageJson}`)
    } else if (program === 'npx' && args[0] === 'tsx') needFile(args[1], 'npx tsx')
    else if (program === 'node')
      needFile(
        args.find((a) => !a.startsWith('-')),
        'node',
      )
    else if (program === 'bash' || program === 'sh')
      needFile(
        args.find((a) => !a.startsWith('-')),
        program,
      )
  }
  return [...problems]
}

const shellBlocks = DOCS.flatMap((doc) => fencedBlocks(doc).filter((b) => SHELL_LANGUAGES.has(b.language)))
const commands = shellBlocks.flatMap(commandsOf)

describe('the commands in the documentation', () => {
  it('finds commands in the README, docs/ and the widget README', () => {
    expect(commands.filter((c) => c.doc === 'README.md').map((c) => c.text)).toEqual(
      expect.arrayContaining(['npm install', 'npm start', 'npm test']),
    )
    const docs = new Set(commands.map((c) => c.doc))
    expect(['docs/deployment.md', 'docs/performance.md', 'web/README.md'].filter((doc) => !docs.has(doc))).toEqual([])
    expect(commands.length).toBeGreaterThan(30)
  })

  it('name npm scripts, files, admin commands and TRYON_* variables that exist', () => {
    const problems = shellBlocks.flatMap((block) => {
      const shell = { cwd: packageDirOf(block.doc) }
      return commandsOf(block).flatMap((command) =>
        problemsOf(command, shell).map((p) => `${command.doc}:${command.line}: \`${command.text}\`: ${p}`),
      )
    })
    expect(problems).toEqual([])
  })

  it('would catch a wrong script, file, admin command or variable', () => {
    const wrong = (text: string, doc = 'README.md') => problemsOf({ doc, line: 1, text })
    expect(wrong('npm run no-such-script')).toEqual([expect.stringContaining('has no script "no-such-script"')])
    expect(wrong('npm run deploy:widget', 'web/README.md')).toEqual([expect.stringContaining('web/package.json has no script')])
    expect(wrong('cd .. && npm run deploy:widget', 'web/README.md')).toEqual([])
    expect(wrong('npx tsx scripts/no-such-bench.ts')).toEqual([expect.stringContaining('does not exist')])
    expect(wrong('bash .ci/no-such-file')).toEqual([expect.stringContaining('does not exist')])
    expect(wrong('npm run --silent admin -- keys explode KEY_ID')).toEqual([expect.stringContaining('no command "keys explode"')])
    expect(wrong('npm run --silent admin -- sweep --older-than 600')).toEqual([])
    expect(wrong('npm run --silent admin -- sweep --younger-than 600')).toEqual([expect.stringContaining('no option --younger-than')])
    expect(wrong('TRYON_NO_SUCH_SETTING=1 npm start')).toEqual([expect.stringContaining('TRYON_NO_SUCH_SETTING')])
  })
})

describe('the documentation', () => {
  it('names only TRYON_* variables the code reads, in prose as well as in commands', () => {
    const unknown = DOCS.flatMap((doc) =>
      read(doc)
        .split('\n')
        .flatMap((text, index) =>
          (text.match(/\bTRYON_[A-Z0-9_]+/g) ?? []).filter((v) => !CODE_TEXT.includes(v)).map((v) => `${doc}:${index + 1}: ${v}`),
        ),
    )
    expect(unknown).toEqual([])
  })

  it('links only to files of this repository that exist, and to headings they have', () => {
    const broken: string[] = []
    for (const doc of DOCS) {
      read(doc)
        .split('\n')
        .forEach((text, index) => {
          for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
            if (/^[a-z]+:/.test(target)) continue
            const [path, anchor] = target.split('#')
            const file = path ? relative(ROOT, resolve(ROOT, dirname(doc), path)) : doc
            const where = `${doc}:${index + 1}: ${target}`
            if (file.startsWith('..')) broken.push(`${where} leaves the repository`)
            else if (!existsSync(join(ROOT, file))) broken.push(`${where}: ${file} does not exist`)
            else if (anchor && file.endsWith('.md') && !headingSlugs(file).has(anchor))
              broken.push(`${where}: ${file} has no heading #${anchor}`)
          }
        })
    }
    expect(broken).toEqual([])
  })
})

describe('the SQL functions the documentation names', () => {
  it('are defined by a migration', () => {
    const migrations = readdirSync(join(ROOT, 'supabase/migrations'))
      .map((f) => read(`supabase/migrations/${f}`))
      .join('\n')
    const defined = new Set([...migrations.matchAll(/create (?:or replace )?function (tryon\.\w+)/g)].map((m) => m[1]))
    const named = DOCS.flatMap((doc) => [...read(doc).matchAll(/\b(tryon\.\w+)\(/g)].map((m) => [doc, m[1]]))
    expect(named.length).toBeGreaterThan(10)
    expect(named.filter(([, fn]) => !defined.has(fn)).map(([doc, fn]) => `${doc}: ${fn} is defined by no migration`)).toEqual([])
  })
})

/** GitHub's heading anchors: lowercase, punctuation dropped, spaces as hyphens. */
function headingSlugs(doc: string): Set<string> {
  const slugs = new Set<string>()
  for (const [, heading] of read(doc).matchAll(/^#{1,6} (.+)$/gm)) {
    slugs.add(
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    )
  }
  return slugs
}

describe('the README', () => {
  const readme = read('README.md')
  const openapi = JSON.parse(read('openapi.json'))
  const schemas = openapi.components.schemas

  it('lists every error code with its HTTP status, and no other', () => {
    const rows = [...readme.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map(([, code, status]) => [code, Number(status)])
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(Object.entries(errorCatalogue).map(([code, { status }]) => [code, status])))
    expect(rows).toHaveLength(Object.keys(errorCatalogue).length)
  })

  it('shows a request the API takes and an answer of the shape it gives', () => {
    const curl = commandsOf(fencedBlocks('README.md').find((b) => b.lines.some((l) => l.text.startsWith('curl ')))!)[0].text
    const [words] = segmentsOf(curl)
    expect(words.find((w) => w.startsWith('http'))).toBe('http://127.0.0.1:54321/functions/v1/tryon-api')
    const headers = words.flatMap((w, i) => (words[i - 1] === '-H' ? [w.split(':')[0]] : []))
    expect(headers).toEqual([openapi.components.securitySchemes.apiKey.name, 'Content-Type'])
    expect(curl).toContain("'Content-Type: application/json'")

    const body = JSON.parse(words[words.indexOf('-d') + 1])
    expect(Object.keys(schemas.TryOnRequest.properties)).toEqual(expect.arrayContaining(Object.keys(body)))
    expect(Object.keys(body)).toEqual(expect.arrayContaining(schemas.TryOnRequest.required))

    const answer = JSON.parse(
      fencedBlocks('README.md')
        .find((b) => b.language === 'json')!
        .lines.map((l) => l.text)
        .join('\n'),
    )
    expect(Object.keys(schemas.TryOnSuccess.properties)).toEqual(expect.arrayContaining(Object.keys(answer)))
    expect(Object.keys(answer)).toEqual(expect.arrayContaining(schemas.TryOnSuccess.required))
  })

  it('stays at 150 lines or fewer', () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(150)
  })
})

describe('docs/api.md', () => {
  it('explains every test scenario the API accepts', () => {
    const openapi = JSON.parse(read('openapi.json'))
    const scenarioHeader = openapi.paths['/functions/v1/tryon-api'].post.parameters.find(
      (p: { name: string }) => p.name === 'X-Tryon-Scenario',
    )
    const api = read('docs/api.md')
    expect(scenarioHeader.schema.enum.filter((scenario: string) => !api.includes(`| \`${scenario}\` |`))).toEqual([])
  })
})
