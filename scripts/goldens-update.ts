/**
 * Writes the golden files of stored events (`npm run goldens:update`): the stored form of
 * every sample of `@tillflow/engine/testing`'s `EngineEventSamples`,
 * `@tillflow/core/testing`'s `EventSamples` and the intake's `AlertEventSamples` that has no
 * file yet, and the golden hash chain
 * when it has none. It never deletes a file, and never rewrites one whose content differs:
 * a file stands for logs already written in that form. It lists such files instead and
 * exits 1; `--replace <registry>/<file>` (or `--replace hash-chain`) rewrites one, for a
 * form that never reached a log (docs/event-store.md, "Changing an event's schema").
 * Tests only read these files.
 */
import { EventCatalog } from "@tillflow/core"
import { EventSamples } from "@tillflow/core/testing"
// The modules, not the entry: the entry's contract suites need a running vitest.
import * as EngineEventSamples from "@tillflow/engine/testing/EngineEventSamples"
import * as EventGoldens from "@tillflow/engine/testing/EventGoldens"
import * as HashChainSamples from "@tillflow/engine/testing/HashChainSamples"
import * as AlertEventSamples from "@tillflow/intake/testing/AlertEventSamples"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const engineGoldens = Path.join(root, "packages/engine/test/goldens")
const coreGoldens = Path.join(root, "packages/core/test/goldens")
const intakeGoldens = Path.join(root, "packages/intake/test/goldens")

const replace = new Set<string>()
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i]
  if (arg === "--replace" && process.argv[i + 1] !== undefined) replace.add(process.argv[++i] as string)
  else if (arg?.startsWith("--replace=")) replace.add(arg.slice("--replace=".length))
  else {
    console.error(
      `goldens:update: unknown argument ${arg}; usage: [--replace <registry>/<file> | hash-chain] …`
    )
    process.exit(2)
  }
}

const dirOf = (registry: string) =>
  registry === EngineEventSamples.registry
    ? Path.join(engineGoldens, registry)
    : registry === AlertEventSamples.registry
      ? Path.join(intakeGoldens, registry)
      : Path.join(coreGoldens, registry)

let written = 0
let refused = 0

/** Writes `text` to `file` unless it holds something else (then only when `key` is to be replaced). */
const put = (file: string, key: string, text: string, describe: () => ReadonlyArray<string>) => {
  if (!Fs.existsSync(file)) {
    Fs.mkdirSync(Path.dirname(file), { recursive: true })
    Fs.writeFileSync(file, text)
    console.log(`wrote    ${Path.relative(root, file)}`)
    written++
    return
  }
  if (Fs.readFileSync(file, "utf8") === text) return
  if (replace.has(key)) {
    Fs.writeFileSync(file, text)
    console.log(`replaced ${Path.relative(root, file)}`)
    written++
    return
  }
  refused++
  console.error(`differs  ${Path.relative(root, file)} (kept; --replace ${key} rewrites it)`)
  for (const line of describe()) console.error(`         ${line}`)
}

const program = Effect.gen(function* () {
  const known = new Set([
    EngineEventSamples.registry,
    AlertEventSamples.registry,
    ...EventCatalog.registries.map((r) => r.name)
  ])
  const samples = [
    ...EngineEventSamples.samples,
    ...AlertEventSamples.samples,
    ...(yield* EventSamples.samples)
  ]
  for (const sample of samples) {
    if (!known.has(sample.registry))
      return yield* Effect.fail(new Error(`a sample of unknown registry ${sample.registry}`))
    const golden = yield* EventGoldens.fromSample(sample)
    const name = EventGoldens.fileName(golden)
    const file = Path.join(dirOf(golden.registry), name)
    put(file, `${golden.registry}/${name}`, EventGoldens.render(golden), () => {
      const parsed = EventGoldens.parse(name, Fs.readFileSync(file, "utf8"))
      return Either.isLeft(parsed) ? [parsed.left] : EventGoldens.differences(parsed.right, golden)
    })
  }
  const chain = yield* HashChainSamples.chain
  put(Path.join(engineGoldens, "hash-chain.json"), "hash-chain", HashChainSamples.render(chain), () => [
    "the canonical JSON, a link text or a hash of the sample chain changed"
  ])
})

Effect.runPromise(program).then(
  () => {
    console.log(`goldens:update: ${written} written, ${refused} differing kept`)
    process.exit(refused === 0 ? 0 : 1)
  },
  (error: unknown) => {
    console.error(`goldens:update: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)
