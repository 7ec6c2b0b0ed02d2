/**
 * docs/embedding.md shows the examples' own code: each block marked
 * `<!-- example: <file>#<region> -->` is the `// #region <region>` of that file, so the
 * guide cannot drift from what the examples run.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"

const root = Path.resolve(import.meta.dirname, "../../..")
const guide = Fs.readFileSync(Path.join(root, "docs/embedding.md"), "utf8")
const marker = /<!-- example: (\S+)#(\S+) -->\n```ts\n([\s\S]*?)\n```/g

/** The lines between `// #region <name>` and its `// #endregion`. */
const region = (source: string, name: string): string | undefined => {
  const start = source.indexOf(`// #region ${name}\n`)
  if (start < 0) return undefined
  const body = source.slice(start + `// #region ${name}\n`.length)
  const end = body.indexOf("// #endregion")
  return end < 0 ? undefined : body.slice(0, end).trimEnd()
}

const blocks = Array.from(guide.matchAll(marker), (m) => ({ file: m[1]!, name: m[2]!, code: m[3]! }))

describe("docs/embedding.md", () => {
  it("marks the Promise example and the Effect example", () => {
    expect(blocks.map((b) => b.name)).toEqual(["promise-example", "effect-example"])
  })

  for (const block of blocks) {
    it(`shows ${block.file}#${block.name} as the example runs it`, () => {
      const path = Path.join(root, block.file)
      if (!Fs.existsSync(path)) {
        // Not on this branch yet: the guide says so where the block is, for the merge to resolve.
        expect(guide).toContain(
          `TODO(merge): this block is to be the \`${block.name}\` region of\n${block.file}`
        )
        return
      }
      const expected = region(Fs.readFileSync(path, "utf8"), block.name)
      expect(expected, `${block.file} has no "// #region ${block.name}"`).toBeDefined()
      expect(block.code).toBe(expected)
    })
  }
})
