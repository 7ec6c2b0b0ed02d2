/**
 * The `tillflow` executable (`apps/cli/bin/tillflow.mjs`, what `npx tillflow` runs): the
 * command line bundled like the worker (`scripts/launcher.mjs`, whose rebuild rules the
 * worker's `Launcher.test.ts` covers), here into a build folder of the file's own; and the
 * help it prints, read as an operator reads it: in a 100-column terminal, in a pipe, under
 * `NO_COLOR`, looking for what an option falls back to.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { tillflow } from "@tillflow/cli/Commands"
import * as Help from "@tillflow/cli/Help"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Bin from "./support/Bin.js"

const buildDir = Bin.testBuildDir()
afterAll(() => Fs.rmSync(buildDir, { recursive: true, force: true }))

const help = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const run = await Bin.run(buildDir, args, env)
  expect(run.status, run.stderr).toBe(0)
  return run.stdout
}

const wider = (text: string) => text.split("\n").filter((line) => line.length > 100)
// eslint-disable-next-line no-control-regex
const ansi = /\u001b\[/

describe("the tillflow executable", () => {
  it("bundles the command line on first use and answers --help with usage lines that start with tillflow", async () => {
    const text = await help(["--help"])
    expect(Fs.existsSync(Path.join(buildDir, "main.cjs"))).toBe(true)
    expect(Fs.existsSync(Path.join(buildDir, "main.cjs.map"))).toBe(true)
    const meta = JSON.parse(Fs.readFileSync(Path.join(buildDir, "main.meta.json"), "utf8")) as {
      readonly inputs: Record<string, unknown>
    }
    expect(Object.keys(meta.inputs)).toContain("apps/cli/src/main.ts")
    const usage = Bin.usageLines(text)
    expect(usage.length).toBeGreaterThan(0)
    for (const line of usage) expect(line).toMatch(/^\$ tillflow\b/)
  }, 240_000)
})

describe("the tillflow executable's start-up", () => {
  it("answers --help of a command from help.json, the same text the command line renders", async () => {
    const fromIndex = await help(["executions", "list", "--help"])
    const index = JSON.parse(Fs.readFileSync(Path.join(buildDir, "help.json"), "utf8")) as {
      readonly help: Record<string, { readonly plain: string }>
    }
    expect(fromIndex).toBe(`${index.help["executions list"]?.plain}\n`)
    // What the command line renders for it in this process, from the sources.
    const rendered = await Effect.runPromise(
      Help.render(
        tillflow,
        { name: "tillflow", version: "0.1.0" },
        ["executions", "list", "--help"],
        false
      ).pipe(Effect.provide(NodeContext.layer))
    )
    expect(fromIndex).toBe(`${Option.getOrThrow(rendered)}\n`)
  }, 240_000)

  it("keeps a V8 code cache of the bundle beside it once a command ran", async () => {
    const run = await Bin.run(buildDir, ["sale", "--serial", "X1", "--amount", "1,00"])
    expect(run.status).toBe(2)
    const caches = Fs.readdirSync(buildDir).filter((name) => /^main\.cjs\..+\.cache$/.test(name))
    expect(caches.length).toBe(1)
  }, 240_000)

  it("prints no colour escapes in the command line's own validation errors into a pipe", async () => {
    for (const args of [
      ["sale", "--serial", "X1", "--amount", "1.00", "--delivery", "pigeon"],
      ["sale", "--serial", "X1"],
      ["nosuch"]
    ]) {
      const run = await Bin.run(buildDir, args)
      expect(run.status, args.join(" ")).toBe(2)
      expect(run.stderr + run.stdout).not.toMatch(ansi)
    }
  }, 240_000)
})

describe("tillflow's usage errors", () => {
  it("a bad option value is refused with its flag and what is allowed (exit 2), before any store is opened", async () => {
    const dataDir = Path.join(buildDir, "never-created")
    for (const [args, message] of [
      [["executions", "list", "--limit", "0"], "--limit must be from 1 to 10000"],
      [["events", "tail", "--last", "-3"], "--last must be 0 or more"],
      [
        ["sale", "--serial", "X1", "--amount", "1.00", "--deadline", "0"],
        "--deadline must be from 1 to 86400"
      ],
      [
        ["device", "set-screen-brightness", "--serial", "X1", "--min", "0", "--max", "300"],
        "--max 300: a brightness level is an integer from 0 to 100"
      ],
      [["reverse", "--serial", "X1", "--original-transaction-id", "g"], "--amount is required with --serial"],
      [
        ["sale", "--serial", "X1", "--amount", "1.00", "--billing-address", "Main St 1"],
        "--billing-address needs --billing-zip-code"
      ]
    ] as const) {
      const refused = await Bin.run(buildDir, args, { TILLFLOW_DATA_DIR: dataDir })
      expect(refused.status, `${args.join(" ")}: ${refused.stderr}`).toBe(2)
      expect(refused.stderr).toContain(message)
    }
    expect(Fs.existsSync(dataDir)).toBe(false)
  }, 240_000)
})

describe("tillflow's help", () => {
  it("fits 100 columns, at the top and for a command with many options", async () => {
    expect(wider(await help(["--help"]))).toEqual([])
    expect(wider(await help(["sale", "--help"]))).toEqual([])
  }, 240_000)

  it("names the whole command in its usage lines: tillflow sale, tillflow executions list", async () => {
    const sale = Bin.usageLines(await help(["sale", "--help"]))
    expect(sale.length).toBeGreaterThan(0)
    for (const line of sale) expect(line).toMatch(/^\$ tillflow sale\b/)
    expect(Bin.usageLines(await help(["executions", "list", "--help"]))[0]).toMatch(
      /^\$ tillflow executions list\b/
    )
  }, 240_000)

  it("prints no colour escapes into a pipe, nor under NO_COLOR", async () => {
    expect(await help(["sale", "--help"])).not.toMatch(ansi)
    expect(await help(["--help"], { NO_COLOR: "1" })).not.toMatch(ansi)
  }, 240_000)

  it("shows the defaults: EUR for --currency, 900 s for --wait", async () => {
    const text = await help(["sale", "--help"])
    // An option's entry: its heading line under OPTIONS, and the indented lines below it.
    const section = (option: string) => {
      const lines = text.slice(text.indexOf("OPTIONS")).split("\n")
      const start = lines.findIndex((line) => /^\S/.test(line) && line.includes(option))
      expect(start, `${option} in:\n${text}`).toBeGreaterThanOrEqual(0)
      const end = lines.findIndex((line, i) => i > start && /^\S/.test(line))
      return lines.slice(start, end < 0 ? undefined : end).join("\n")
    }
    expect(section("--currency")).toMatch(/default[^\n]*EUR/i)
    expect(section("--wait")).toMatch(/default[^\n]*900/i)
  }, 240_000)
})
