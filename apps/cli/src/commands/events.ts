/** `tillflow events tail`: the event log, from its last events or a checkpoint, followed with `-f`. */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Intake from "@tillflow/intake/Intake"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Backend from "../Backend.js"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { boundedInteger, common, withShownDefault } from "../internal/options.js"

const eventLine = (e: Intake.EventView): string =>
  `${e.position.padEnd(14)} ${e.recordedAt}  ${e.streamId}@${e.version}  ${e.type}`

/** The last `count` events of the log, and the position after them. */
const lastEvents = (intake: Intake.Service, count: number) =>
  Effect.gen(function* () {
    // Read to the end, keep a window.
    const window: Array<Intake.EventView> = []
    let cursor: string | undefined = undefined
    while (true) {
      const page: Intake.EventsPage = yield* intake.events(cursor, 1000)
      window.push(...page.events)
      if (window.length > count) window.splice(0, window.length - count)
      cursor = page.next
      if (page.caughtUp) break
    }
    return { events: window, next: cursor }
  })

const tail = Command.make(
  "tail",
  {
    ...common,
    json: Options.boolean("json").pipe(
      Options.withDescription(
        "print NDJSON: one JSON document per event, one per line, as stored (amounts in minor units)"
      )
    ),
    from: Options.text("from").pipe(
      Options.withDescription("a checkpoint (transactionId:position) or start"),
      Options.optional
    ),
    last: boundedInteger("last", 0, Number.MAX_SAFE_INTEGER).pipe(
      Options.withDescription("start with the last N events"),
      withShownDefault(20)
    ),
    follow: Options.boolean("follow").pipe(
      Options.withAlias("f"),
      Options.withDescription("keep printing new events until interrupted")
    )
  },
  Handler.make((o) =>
    Backend.provide(
      o,
      { cloud: false, worker: false },
      Effect.gen(function* () {
        const intake = yield* Intake.Intake
        const emit = (e: Intake.EventView) =>
          o.json ? Console.log(JSON.stringify(e)) : Console.log(eventLine(e))
        let after = Option.getOrUndefined(o.from)
        if (after === undefined) {
          const last = yield* lastEvents(intake, o.last)
          yield* Effect.forEach(last.events, emit, { discard: true })
          after = last.next
        }
        const position = yield* Ref.make(after)
        while (true) {
          const page = yield* intake.events(yield* Ref.get(position), 500)
          yield* Effect.forEach(page.events, emit, { discard: true })
          yield* Ref.set(position, page.next)
          if (page.caughtUp) {
            if (!o.follow) return Output.ExitCode.ok
            yield* Effect.sleep("500 millis")
          }
        }
      })
    )
  )
).pipe(
  Command.withDescription(
    "prints the event log (the last events, or from a checkpoint), and follows it with -f"
  )
)

export const events = Command.make("events").pipe(
  Command.withDescription("the event log"),
  Command.withSubcommands([tail])
)
