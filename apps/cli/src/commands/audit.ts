/**
 * `tillflow audit`: the event log's ledger (`ledger`), its hash chains and money conservation (`verify`), the
 * live projection against a rebuild from scratch (`rebuild`), and one payment's timeline.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Intake from "@tillflow/intake/Intake"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Backend from "../Backend.js"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { common } from "../internal/options.js"
import { ledger } from "./ledger.js"

const verify = Command.make(
  "verify",
  {
    ...common,
    stream: Options.text("stream").pipe(Options.withDescription("verify one stream only"), Options.optional)
  },
  Handler.make((o) =>
    Backend.provide(
      o,
      { cloud: false, worker: false },
      Effect.gen(function* () {
        const result = yield* (yield* Intake.Intake).verify(Option.getOrUndefined(o.stream))
        const money = result.conservation
        yield* Output.print(o.json, result, () => [
          result.broken.length === 0
            ? `OK: ${result.eventsChecked} events in ${result.streamsChecked} streams, every hash chain intact`
            : `BROKEN: ${result.broken.length} of ${result.streamsChecked} streams (${result.eventsChecked} events checked)`,
          ...result.broken.map(
            (b) =>
              `  first broken link: ${b.streamId} at version ${b.version} (${b.kind}): expected ${b.expected}, found ${b.found}`
          ),
          ...(money === undefined
            ? []
            : [
                money.broken.length === 0
                  ? `OK: ${money.transactionsChecked} transactions, none credited back above what it charged`
                  : `MONEY NOT CONSERVED: ${money.broken.length} of ${money.transactionsChecked} transactions credited back above what they charged`,
                ...money.broken.map((b) => `  ${b.message}`),
                ...((money.disagreements ?? []).length === 0
                  ? []
                  : [
                      `DISAGREEMENTS: ${(money.disagreements ?? []).length} facts state another amount than their transaction's history`
                    ]),
                ...(money.disagreements ?? []).map((d) => `  ${d.message}`),
                ...money.undecodable.map((u) => `  unreadable: ${u}`)
              ])
        ])
        return result.ok ? Output.ExitCode.ok : Output.ExitCode.failed
      })
    )
  )
).pipe(
  Command.withDescription(
    "verifies the hash chains of the event log (reporting the first broken link), each transaction's money conservation (credited back ≤ charged, per currency) and that every fact's stated amount agrees with its transaction's history"
  )
)

const rebuild = Command.make(
  "rebuild",
  { ...common },
  Handler.make((o) =>
    Backend.provide(
      o,
      { cloud: false, worker: false },
      Effect.gen(function* () {
        const result = yield* (yield* Intake.Intake).rebuild
        yield* Output.print(o.json, result, () =>
          !result.compared
            ? [
                `no live projection snapshot yet (a worker writes one within seconds of new events); rebuilt ${result.eventsRead} events, digest ${result.rebuiltDigest}`
              ]
            : [
                result.equal
                  ? `EQUAL: the ledger rebuilt from scratch up to ${result.checkpoint} (${result.eventsRead} events) equals the live projection`
                  : `DIFFERENT: ${result.differences.length} rows differ between the rebuilt ledger and the live projection at ${result.checkpoint}`,
                `  live digest     ${result.liveDigest}`,
                `  rebuilt digest  ${result.rebuiltDigest}`,
                ...result.differences.map((d) => `  ${d.row}: live ${d.live}; rebuilt ${d.rebuilt}`)
              ]
        )
        return result.compared && !result.equal ? Output.ExitCode.failed : Output.ExitCode.ok
      })
    )
  )
).pipe(
  Command.withDescription("rebuilds the ledger from the first event and compares it with the live projection")
)

const timeline = Command.make(
  "timeline",
  { ...common, reference: Args.text({ name: "execution id, transaction reference or idempotency key" }) },
  Handler.make((o) =>
    Backend.provide(
      o,
      { cloud: false, worker: false },
      Effect.gen(function* () {
        const result = yield* (yield* Intake.Intake).timeline(o.reference)
        yield* Output.print(o.json, result, () => [
          `timeline of execution ${result.executionId}`,
          ...result.lines.map((l) => `  ${l}`)
        ])
        return Output.ExitCode.ok
      })
    )
  )
).pipe(Command.withDescription("one payment's full timeline, human-readable"))

export const audit = Command.make("audit").pipe(
  Command.withDescription("replay, export and verify the event log"),
  Command.withSubcommands([ledger, verify, rebuild, timeline])
)
