/**
 * Summarises V8 CPU profiles (`node --cpu-prof` writes `.cpuprofile` files): the
 * functions with the most self time, self time by package, and the workspace functions
 * with the most inclusive time (what ran under them, synchronously), as Markdown tables.
 * `npm run bench:profile-summary -- FILE_OR_DIR… [--top N]`; a directory stands for
 * every `.cpuprofile` in it, each summarised on its own. Workspace sources run through
 * `tsx`, whose output puts a module on one line: their positions are mapped back to
 * source lines with the source maps in tsx's cache (`$TMPDIR/tsx-<uid>`).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The parts of a `.cpuprofile` the summary reads. */
export interface CpuProfile {
  readonly nodes: ReadonlyArray<{
    readonly id: number
    readonly callFrame: {
      readonly functionName: string
      readonly url: string
      readonly lineNumber: number
      readonly columnNumber: number
    }
    readonly children?: ReadonlyArray<number> | undefined
  }>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
  readonly startTime: number
  readonly endTime: number
}

/** Self time of one function or package. */
export interface Entry {
  readonly name: string
  readonly where: string
  readonly selfMs: number
  readonly share: number
}

/** The summary of one profile. */
export interface Summary {
  readonly totalMs: number
  /** Time in samples of V8's idle/program/GC pseudo-frames, by name. */
  readonly pseudo: ReadonlyArray<Entry>
  readonly functions: ReadonlyArray<Entry>
  readonly packages: ReadonlyArray<Entry>
  /** Workspace functions (packages/*, apps/*) by inclusive time. */
  readonly inclusive: ReadonlyArray<Entry>
  /** Self time in broad groups: Effect's runtime, Schema, GC, socket writes, idle … */
  readonly groups: ReadonlyArray<Entry>
}

/** The broad group of a frame's self time. */
export const groupOf = (functionName: string, url: string): string => {
  if (functionName === "(idle)") return "idle (waiting for I/O)"
  if (functionName === "(garbage collector)") return "garbage collector"
  if (functionName === "(program)") return "V8 (program)"
  if (/\/effect\/dist\/esm\/(Schema|SchemaAST|ParseResult)\.js/.test(url))
    return "effect Schema (build, parse, encode)"
  if (url.includes("/node_modules/effect/")) return "effect runtime (fibers, context, scheduler …)"
  if (functionName === "writev" || functionName === "writeBuffer") return "socket writes (writev)"
  if (
    url.startsWith("node:internal/modules") ||
    url.includes("/node_modules/tsx/") ||
    functionName === "compileSourceTextModule"
  )
    return "module loading (ESM loader, tsx)"
  if (url.includes("crypto")) return "crypto (Web Crypto digests, node:crypto)"
  if (/\/node_modules\/(pg|pg-protocol|pg-pool|@effect\/sql|@effect\/sql-pg)\//.test(url))
    return "PostgreSQL client (pg, @effect/sql)"
  if (url.startsWith("wasm://") || url.includes("/@electric-sql/pglite/")) return "PGlite (WASM)"
  if (/\/(packages|apps)\/[^/]+\/src\//.test(url) && !url.includes("/node_modules/"))
    return "tillflow code (packages, apps)"
  return "other"
}

/** Maps a generated (line, column) of a script back to its source line, if it can. */
export type SourceLines = (url: string, line: number, column: number) => number | undefined

const base64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

/** Decodes one line of a source map's `mappings` into [generated column, source line] pairs. */
export const decodeMappingLine = (
  line: string,
  state: { sourceLine: number }
): ReadonlyArray<readonly [number, number]> => {
  const out: Array<readonly [number, number]> = []
  let column = 0
  for (const segment of line.split(",")) {
    if (segment === "") continue
    const values: Array<number> = []
    let value = 0
    let shift = 0
    for (const char of segment) {
      const digit = base64.indexOf(char)
      value += (digit & 31) << shift
      if ((digit & 32) !== 0) {
        shift += 5
      } else {
        values.push((value & 1) === 1 ? -(value >>> 1) : value >>> 1)
        value = 0
        shift = 0
      }
    }
    column += values[0] ?? 0
    if (values.length >= 4) {
      state.sourceLine += values[2] ?? 0
      out.push([column, state.sourceLine])
    }
  }
  return out
}

/**
 * Source lines from tsx's cache: for each source file, the newest cached transform's map
 * (the one the profiled run used, unless the file changed since).
 */
export const tsxSourceLines = (cacheDir: string): SourceLines => {
  const newest = new Map<string, { readonly mtime: number; readonly file: string }>()
  let indexed = false
  const decoded = new Map<string, ReadonlyArray<ReadonlyArray<readonly [number, number]>> | undefined>()
  const index = () => {
    indexed = true
    if (!fs.existsSync(cacheDir)) return
    for (const name of fs.readdirSync(cacheDir)) {
      const file = path.join(cacheDir, name)
      try {
        const stat = fs.statSync(file)
        if (!stat.isFile()) continue
        const head = fs.readFileSync(file, "utf8")
        const sources = /"sources":\["([^"]+)"/.exec(head)?.[1]
        if (sources === undefined) continue
        const known = newest.get(sources)
        if (known === undefined || known.mtime < stat.mtimeMs)
          newest.set(sources, { mtime: stat.mtimeMs, file })
      } catch {
        // not a cache entry
      }
    }
  }
  const linesOf = (source: string) => {
    if (decoded.has(source)) return decoded.get(source)
    if (!indexed) index()
    const entry = newest.get(source)
    let lines: ReadonlyArray<ReadonlyArray<readonly [number, number]>> | undefined
    if (entry !== undefined) {
      const map = (
        JSON.parse(fs.readFileSync(entry.file, "utf8")) as { readonly map?: { readonly mappings?: string } }
      ).map
      const state = { sourceLine: 0 }
      lines = map?.mappings?.split(";").map((line) => decodeMappingLine(line, state))
    }
    decoded.set(source, lines)
    return lines
  }
  return (url, line, column) => {
    if (!url.startsWith("file://") || url.includes("/node_modules/")) return undefined
    const segments = linesOf(fileURLToPath(url))?.[line]
    if (segments === undefined || segments.length === 0) return undefined
    let found: number | undefined
    for (const [generated, source] of segments) {
      if (generated > column) break
      found = source
    }
    return found ?? segments[0]?.[1]
  }
}

/** Where a script is: `effect`, `@effect/sql`, `packages/core`, `node:internal` … */
export const packageOf = (url: string): string => {
  if (url === "") return "(native)"
  if (url.startsWith("node:")) return url.startsWith("node:internal") ? "node:internal" : url
  const modules = url.lastIndexOf("node_modules/")
  if (modules >= 0) {
    const rest = url.slice(modules + "node_modules/".length).split("/")
    return rest[0]?.startsWith("@") === true ? `${rest[0]}/${rest[1] ?? ""}` : (rest[0] ?? url)
  }
  const workspace = /\/(packages|apps)\/([^/]+)\//.exec(url)
  if (workspace !== null) return `${workspace[1]}/${workspace[2]}`
  return path.basename(url)
}

const shortUrl = (url: string, line: number): string => {
  const workspace = /\/((?:packages|apps)\/.*)$/.exec(url)
  const modules = url.lastIndexOf("node_modules/")
  const where =
    workspace !== null
      ? (workspace[1] ?? url)
      : modules >= 0
        ? url.slice(modules + "node_modules/".length)
        : url.replace(/^file:\/\//, "")
  return where === "" ? "" : `${where}:${line + 1}`
}

const pseudoFrames = new Set(["(idle)", "(program)", "(garbage collector)", "(root)"])

const isWorkspace = (url: string) =>
  /\/(packages|apps)\/[^/]+\/src\//.test(url) && !url.includes("/node_modules/")

/** Self time per function and per package, largest first. */
export const summarise = (
  profile: CpuProfile,
  top = 25,
  sourceLines: SourceLines = () => undefined
): Summary => {
  const location = (frame: CpuProfile["nodes"][number]["callFrame"]) =>
    shortUrl(frame.url, sourceLines(frame.url, frame.lineNumber, frame.columnNumber) ?? frame.lineNumber)
  const byNode = new Map<number, number>()
  profile.samples.forEach((id, i) => {
    byNode.set(id, (byNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  const totalUs = Array.from(byNode.values()).reduce((a, b) => a + b, 0)
  const functions = new Map<string, { name: string; where: string; us: number }>()
  const packages = new Map<string, number>()
  const pseudo = new Map<string, number>()
  const groups = new Map<string, number>()
  for (const node of profile.nodes) {
    const us = byNode.get(node.id) ?? 0
    if (us === 0) continue
    const frame = node.callFrame
    const name = frame.functionName === "" ? "(anonymous)" : frame.functionName
    const group = groupOf(name, frame.url)
    groups.set(group, (groups.get(group) ?? 0) + us)
    if (pseudoFrames.has(name)) {
      pseudo.set(name, (pseudo.get(name) ?? 0) + us)
      continue
    }
    const where = location(frame)
    const key = `${name}@${where}`
    const entry = functions.get(key) ?? { name, where, us: 0 }
    entry.us += us
    functions.set(key, entry)
    const pkg = packageOf(frame.url)
    packages.set(pkg, (packages.get(pkg) ?? 0) + us)
  }
  // Inclusive time of workspace functions: each sample counts once for every distinct
  // workspace function on its stack.
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const nodeById = new Map(profile.nodes.map((node) => [node.id, node]))
  const keyOf = new Map<
    number,
    { readonly key: string; readonly name: string; readonly where: string } | null
  >()
  const workspaceKey = (id: number) => {
    const cached = keyOf.get(id)
    if (cached !== undefined) return cached
    const frame = nodeById.get(id)?.callFrame
    const value =
      frame === undefined || !isWorkspace(frame.url)
        ? null
        : (() => {
            const name = frame.functionName === "" ? "(anonymous)" : frame.functionName
            const where = location(frame)
            return { key: `${name}@${where}`, name, where }
          })()
    keyOf.set(id, value)
    return value
  }
  const inclusive = new Map<string, { name: string; where: string; us: number }>()
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const key = workspaceKey(at)
      if (key === null || seen.has(key.key)) continue
      seen.add(key.key)
      const entry = inclusive.get(key.key) ?? { name: key.name, where: key.where, us: 0 }
      entry.us += delta
      inclusive.set(key.key, entry)
    }
  })
  const entry = (name: string, where: string, us: number): Entry => ({
    name,
    where,
    selfMs: us / 1000,
    share: totalUs === 0 ? 0 : us / totalUs
  })
  return {
    totalMs: totalUs / 1000,
    pseudo: Array.from(pseudo, ([name, us]) => entry(name, "", us)).sort((a, b) => b.selfMs - a.selfMs),
    functions: Array.from(functions.values())
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => entry(f.name, f.where, f.us)),
    packages: Array.from(packages, ([name, us]) => entry(name, "", us))
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, 12),
    groups: Array.from(groups, ([name, us]) => entry(name, "", us)).sort((a, b) => b.selfMs - a.selfMs),
    inclusive: Array.from(inclusive.values())
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => entry(f.name, f.where, f.us))
  }
}

const percent = (share: number) => `${(share * 100).toFixed(1)} %`

/** The summary as Markdown. */
export const toMarkdown = (title: string, summary: Summary): string =>
  [
    `**${title}** — ${(summary.totalMs / 1000).toFixed(1)} s sampled; ` +
      summary.pseudo.map((p) => `${p.name} ${percent(p.share)}`).join(", "),
    "",
    "| self time by group | ms | share |",
    "|---|---:|---:|",
    ...summary.groups.map((g) => `| ${g.name} | ${Math.round(g.selfMs)} | ${percent(g.share)} |`),
    "",
    "| self time by package | ms | share |",
    "|---|---:|---:|",
    ...summary.packages.map((p) => `| ${p.name} | ${Math.round(p.selfMs)} | ${percent(p.share)} |`),
    "",
    "| top self-time functions | where | ms | share |",
    "|---|---|---:|---:|",
    ...summary.functions.map(
      (f) =>
        `| \`${f.name}\` | ${f.where === "" ? "" : `\`${f.where}\``} | ${Math.round(f.selfMs)} | ${percent(f.share)} |`
    ),
    "",
    "| workspace functions by inclusive time | where | ms | share |",
    "|---|---|---:|---:|",
    ...summary.inclusive.map(
      (f) => `| \`${f.name}\` | \`${f.where}\` | ${Math.round(f.selfMs)} | ${percent(f.share)} |`
    )
  ].join("\n")

const main = () => {
  const argv = process.argv.slice(2)
  let top = 25
  const inputs: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? ""
    if (arg === "--top") {
      top = Number(argv[++i] ?? "25")
    } else {
      inputs.push(arg)
    }
  }
  if (inputs.length === 0) {
    process.stderr.write("usage: npm run bench:profile-summary -- FILE.cpuprofile|DIR … [--top N]\n")
    process.exitCode = 2
    return
  }
  const files = inputs.flatMap((input) =>
    fs.statSync(input).isDirectory()
      ? fs
          .readdirSync(input)
          .filter((f) => f.endsWith(".cpuprofile"))
          .map((f) => path.join(input, f))
      : [input]
  )
  const uid = typeof process.getuid === "function" ? process.getuid() : 0
  const sourceLines = tsxSourceLines(path.join(os.tmpdir(), `tsx-${uid}`))
  for (const file of files) {
    const profile = JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile
    process.stdout.write(`${toMarkdown(path.basename(file), summarise(profile, top, sourceLines))}\n\n`)
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
