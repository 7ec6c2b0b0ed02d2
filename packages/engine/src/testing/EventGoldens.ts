/**
 * Golden files of stored events. A golden file holds the stored form of one event — its
 * type, schema version, data and metadata exactly as the store keeps them — and the link
 * the hash chain gives it as the first event of a stream of its own. The files are written
 * once, by `npm run goldens:update`, from samples every package keeps of its event types,
 * and committed; tests compare the samples' stored form with them and read every file back
 * with the code at hand. A change to what is stored (a renamed field, another encoding of a
 * value, another link) therefore fails a test instead of stranding logs already written; a
 * deliberate change takes a new schema version, whose file is added beside the old one,
 * and an upcaster, which the old file then proves (docs/event-store.md).
 *
 * Pure: reading and writing the files is the caller's (a test, the update script).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as EventStore from "../EventStore.js"
import * as HashChain from "../HashChain.js"

/** The link of a golden event: the first event of its own stream. */
export const Link = Schema.Struct({
  streamId: Schema.String,
  version: Schema.Int,
  previousHash: Schema.String,
  hash: Schema.String
})

/** One golden file. */
export const Golden = Schema.Struct({
  /** The registry (event catalogue) the type belongs to: `engine`, `payment`, `lifecycle` … */
  registry: Schema.String,
  type: Schema.String,
  schemaVersion: Schema.Int,
  /** Several files of one type and version tell its forms apart (`failure`, `withOutbox`). */
  variant: Schema.optional(Schema.String),
  data: EventStore.Json,
  metadata: EventStore.JsonObject,
  link: Link
})
/** @see Golden */
export type Golden = typeof Golden.Type

/** A sample event of a registry, as it would be appended (already encoded). */
export interface Sample {
  readonly registry: string
  readonly variant?: string | undefined
  readonly event: EventStore.NewEvent
}

/** The name of a golden's file: `<Type>.v<schemaVersion>[.<variant>].json`. */
export const fileName = (golden: {
  readonly type: string
  readonly schemaVersion: number
  readonly variant?: string | undefined
}): string =>
  `${golden.type}.v${golden.schemaVersion}${golden.variant === undefined ? "" : `.${golden.variant}`}.json`

/** The stream a golden event is linked in. */
export const streamIdOf = (golden: {
  readonly registry: string
  readonly type: string
  readonly schemaVersion: number
  readonly variant?: string | undefined
}): string =>
  `golden-${golden.registry}-${golden.type}-v${golden.schemaVersion}${golden.variant === undefined ? "" : `-${golden.variant}`}`

const canonical = (value: unknown, what: string): Effect.Effect<string, Error> =>
  Either.match(HashChain.canonicalJson(value), {
    onLeft: (notJson) => Effect.fail(new Error(`${what} is not JSON at ${notJson.path}: ${notJson.reason}`)),
    onRight: Effect.succeed
  })

/** The golden of a sample: its stored form and its link, hashed as every store hashes it. */
export const fromSample = (sample: Sample): Effect.Effect<Golden, Error> =>
  Effect.gen(function* () {
    const schemaVersion = sample.event.schemaVersion ?? 1
    const metadata = sample.event.metadata ?? {}
    // Stored as jsonb keeps it: the canonical text parsed back (what a store reads).
    const dataJson = yield* canonical(sample.event.data, `${sample.event.type}'s data`)
    const metadataJson = yield* canonical(metadata, `${sample.event.type}'s metadata`)
    const identity = {
      registry: sample.registry,
      type: sample.event.type,
      schemaVersion,
      ...(sample.variant === undefined ? {} : { variant: sample.variant })
    }
    const streamId = streamIdOf(identity)
    const hash = yield* HashChain.link({
      previousHash: HashChain.genesis,
      streamId,
      version: 1,
      type: sample.event.type,
      schemaVersion,
      dataJson,
      metadataJson
    })
    return {
      ...identity,
      data: JSON.parse(dataJson) as EventStore.Json,
      metadata: JSON.parse(metadataJson) as EventStore.JsonObject,
      link: { streamId, version: 1, previousHash: HashChain.genesis, hash }
    }
  })

/** A golden as its file holds it: two-space JSON, members in canonical order, a final newline. */
export const render = (golden: Golden): string => {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : typeof value === "object" && value !== null
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((key) => [key, sorted((value as Record<string, unknown>)[key])])
          )
        : value
  const { data, metadata, link, ...identity } = golden
  return `${JSON.stringify({ ...identity, data: sorted(data), metadata: sorted(metadata), link }, null, 2)}\n`
}

/** Reads a golden file's text; an error names the file. */
export const parse = (name: string, text: string): Either.Either<Golden, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(`${name}: not JSON (${String(error)})`)
  }
  return Either.mapLeft(
    Schema.decodeUnknownEither(Golden, { onExcessProperty: "error" })(json),
    (error) => `${name}: not a golden file (${error.message})`
  )
}

/** What differs between a golden file and the golden of the same sample today (empty: nothing). */
export const differences = (file: Golden, now: Golden): ReadonlyArray<string> => {
  const text = (value: unknown) => Either.getOrElse(HashChain.canonicalJson(value), () => String(value))
  const out: Array<string> = []
  const compare = (what: string, a: unknown, b: unknown) => {
    const [x, y] = [text(a), text(b)]
    if (x !== y) out.push(`${what}: the file has ${x}, the code now gives ${y}`)
  }
  compare("schemaVersion", file.schemaVersion, now.schemaVersion)
  compare("data", file.data, now.data)
  compare("metadata", file.metadata, now.metadata)
  compare("link", file.link, now.link)
  return out
}

/** The link of a golden recomputed from its content: equal to `golden.link.hash` when the chain is unchanged. */
export const relink = (golden: Golden): Effect.Effect<string, Error> =>
  Effect.gen(function* () {
    return yield* HashChain.link({
      previousHash: golden.link.previousHash,
      streamId: golden.link.streamId,
      version: golden.link.version,
      type: golden.type,
      schemaVersion: golden.schemaVersion,
      dataJson: yield* canonical(golden.data, `${golden.type}'s data`),
      metadataJson: yield* canonical(golden.metadata, `${golden.type}'s metadata`)
    })
  })

/** A golden file as the store would have recorded it (what `verify` and the registries read). */
export const recorded = (golden: Golden, globalPosition: bigint): EventStore.RecordedEvent =>
  new EventStore.RecordedEvent({
    streamId: golden.link.streamId,
    version: golden.link.version,
    globalPosition,
    transactionId: 1n,
    // A fixed, valid UUID v4 per position: the id is not part of the link.
    eventId: `00000000-0000-4000-8000-${globalPosition.toString(16).padStart(12, "0")}`,
    type: golden.type,
    schemaVersion: golden.schemaVersion,
    data: golden.data,
    metadata: golden.metadata,
    recordedAt: DateTime.unsafeMake(0),
    hash: golden.link.hash
  })

/** The files a set of samples needs that `existing` (file names) lacks: what the update script writes. */
export const missing = (
  goldens: ReadonlyArray<Golden>,
  existing: ReadonlySet<string>
): ReadonlyArray<Golden> => goldens.filter((golden) => !existing.has(fileName(golden)))

/**
 * Checks a registry's golden files against its samples and its types:
 * - every type the registry holds has a sample, and every sample a file, equal to it;
 * - every file (old schema versions included) is of a type the registry holds, its link
 *   recomputes to its hash, and `read` (the registry's decoding, upcasters included) reads it.
 * Returns the problems found, each a sentence; none when the encodings are as pinned.
 */
export const check = (options: {
  readonly registry: string
  readonly types: ReadonlySet<string>
  readonly samples: ReadonlyArray<Golden>
  readonly files: ReadonlyArray<{ readonly name: string; readonly text: string }>
  readonly read: (golden: Golden) => Either.Either<unknown, string>
}): Effect.Effect<ReadonlyArray<string>, Error> =>
  Effect.gen(function* () {
    const problems: Array<string> = []
    const update = "if the change is deliberate, see docs/event-store.md, then npm run goldens:update"
    const files = new Map<string, Golden>()
    for (const file of options.files) {
      const parsed = parse(file.name, file.text)
      if (Either.isLeft(parsed)) problems.push(parsed.left)
      else if (fileName(parsed.right) !== file.name) {
        problems.push(`${file.name}: holds ${fileName(parsed.right)}`)
      } else files.set(file.name, parsed.right)
    }
    const sampled = new Set(options.samples.map((s) => s.type))
    for (const type of options.types) {
      if (!sampled.has(type)) {
        problems.push(
          `${options.registry}/${type}: the registry holds this type but no sample of it: add one to the samples, then npm run goldens:update`
        )
      }
    }
    for (const sample of options.samples) {
      const name = fileName(sample)
      if (!options.types.has(sample.type)) {
        problems.push(`${options.registry}/${name}: a sample of a type the registry does not hold`)
      }
      const file = files.get(name)
      if (file === undefined) {
        problems.push(`${options.registry}/${name}: no golden file: npm run goldens:update writes it`)
        continue
      }
      for (const difference of differences(file, sample)) {
        problems.push(`${options.registry}/${name}: the stored form changed: ${difference}; ${update}`)
      }
    }
    for (const [name, golden] of files) {
      if (golden.registry !== options.registry) {
        problems.push(`${name}: of registry ${golden.registry}, found among ${options.registry}'s`)
      }
      if (!options.types.has(golden.type)) {
        problems.push(
          `${options.registry}/${name}: the registry no longer holds ${golden.type}, and logs written with it exist`
        )
      }
      const hash = yield* relink(golden)
      if (hash !== golden.link.hash) {
        problems.push(`${options.registry}/${name}: the hash chain changed: the link is now ${hash}`)
      }
      const read = options.read(golden)
      if (Either.isLeft(read)) {
        problems.push(`${options.registry}/${name}: an event stored like this no longer reads: ${read.left}`)
      }
    }
    return problems
  })
