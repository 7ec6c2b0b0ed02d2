/**
 * The docs' code type-checks: every fenced ```ts / ```typescript block of README.md and
 * docs/*.md becomes a module of its own under `build/doc-blocks/` and is type-checked by
 * `tsc` against the packages as a user gets them (the `.d.ts` of `npm run build`, through
 * the packages' `types` conditions). A block that is a fragment on purpose is fenced
 * ```ts nocheck and skipped; keep those few. A block right after `<!-- example: <file>#<region> -->`
 * shows an example's own code: it must be the `// #region <region>` of that file, which the
 * pack check type-checks and runs (scripts/pack-check.mjs), so it is compared, not compiled
 * alone. Each error names the document and its line.
 *
 * Usage: `node scripts/check-doc-blocks.mjs` (CI runs it after the type-check).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import process from "node:process"
import { fileURLToPath, URL } from "node:url"

const repository = fileURLToPath(new URL("../", import.meta.url))
const outDir = path.join(repository, "build", "doc-blocks")

const documents = () => [
  "README.md",
  ...fs
    .readdirSync(path.join(repository, "docs"))
    .filter((file) => file.endsWith(".md"))
    .sort()
    .map((file) => `docs/${file}`)
]

/** The `// #region <name>` of a source, up to its `// #endregion`, or undefined. */
const regionOf = (source, name) => {
  const start = source.indexOf(`// #region ${name}\n`)
  if (start < 0) return undefined
  const body = source.slice(start + `// #region ${name}\n`.length)
  const end = body.indexOf("// #endregion")
  return end < 0 ? undefined : body.slice(0, end).trimEnd() + "\n"
}

/** The blocks of a document: `{ line, code, check, example }`, `line` of the opening fence (1-based). */
export const blocksOf = (text) => {
  const blocks = []
  const lines = text.split("\n")
  let open
  for (const [i, line] of lines.entries()) {
    if (open === undefined) {
      const fence = /^```(ts|typescript)(?:\s+(.*))?$/.exec(line.trim())
      const example = /^<!-- example: (\S+)#(\S+) -->$/.exec((lines[i - 1] ?? "").trim())
      if (fence) {
        open = {
          line: i + 1,
          check: !(fence[2] ?? "").split(/\s+/).includes("nocheck"),
          example: example ? { file: example[1], region: example[2] } : undefined,
          code: []
        }
      }
    } else if (line.trim() === "```") {
      blocks.push({
        line: open.line,
        check: open.check,
        example: open.example,
        code: open.code.join("\n") + "\n"
      })
      open = undefined
    } else {
      open.code.push(line)
    }
  }
  return blocks
}

const main = () => {
  fs.rmSync(outDir, { recursive: true, force: true })
  fs.mkdirSync(outDir, { recursive: true })
  const origins = new Map()
  let skipped = 0
  let examples = 0
  const drifted = []
  for (const document of documents()) {
    for (const block of blocksOf(fs.readFileSync(path.join(repository, document), "utf8"))) {
      if (block.example !== undefined) {
        const file = path.join(repository, block.example.file)
        const region = fs.existsSync(file)
          ? regionOf(fs.readFileSync(file, "utf8"), block.example.region)
          : undefined
        if (region !== block.code) {
          drifted.push(
            `${document}:${block.line}: not the "${block.example.region}" region of ${block.example.file}`
          )
        }
        examples++
        continue
      }
      if (!block.check) {
        skipped++
        continue
      }
      const file = `${document.replace(/[/.]/g, "_")}_${block.line}.ts`
      fs.writeFileSync(path.join(outDir, file), block.code)
      origins.set(file, { document, line: block.line })
    }
  }
  fs.writeFileSync(
    path.join(outDir, "tsconfig.json"),
    JSON.stringify(
      {
        extends: "../../tsconfig.base.json",
        compilerOptions: {
          composite: false,
          incremental: false,
          noEmit: true,
          // The published types (dist/*.d.ts), not the sources: what a reader of the docs installs.
          customConditions: [],
          // A block shows a use, not a whole program: unused names are fine.
          noUnusedLocals: false,
          noUnusedParameters: false
        },
        include: ["*.ts"]
      },
      null,
      2
    )
  )
  if (drifted.length > 0) {
    process.stderr.write(
      `${drifted.join("\n")}\ndoc blocks: examples shown in the docs differ from the examples\n`
    )
    process.exit(1)
  }
  const build = spawnSync("npm", ["run", "-s", "build"], { cwd: repository, stdio: "inherit" })
  if (build.status !== 0) process.exit(build.status ?? 1)
  const tsc = spawnSync(
    process.execPath,
    [path.join(repository, "node_modules/typescript/bin/tsc"), "-p", outDir],
    {
      cwd: repository,
      encoding: "utf8"
    }
  )
  // Errors read as the document's lines: `docs/engine.md:20 (block line 7): error TS…`.
  const report = (tsc.stdout + tsc.stderr).replace(
    /build\/doc-blocks\/([^(\s]+\.ts)\((\d+),(\d+)\)/g,
    (match, file, line, column) => {
      const origin = origins.get(file)
      return origin === undefined ? match : `${origin.document}:${origin.line + Number(line)}:${column}`
    }
  )
  if (tsc.status !== 0) {
    process.stderr.write(report)
    process.stderr.write(
      `\ndoc blocks: code blocks that do not type-check (fence a fragment \`\`\`ts nocheck)\n`
    )
    process.exit(1)
  }
  process.stdout.write(
    `doc blocks: ${origins.size} type-checked, ${examples} the examples' own code, ${skipped} marked nocheck\n`
  )
}

main()
