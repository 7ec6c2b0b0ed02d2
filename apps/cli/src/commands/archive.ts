/**
 * `tillflow archive run`: moves the events of streams idle for longer than the hot retention
 * (`--hot-days`, else `TILLFLOW_RETENTION_HOT_DAYS`, else 90) out of the hot table into the
 * archive (`EventArchive`, docs/event-store.md), and the execution queue's rows of executions
 * finished before the same cut-off into `tillflow_executions_archive`. Idempotent, and safe to kill: a run moves
 * whole batches of streams, each in one transaction, and the next run moves the rest.
 * Reads, `audit verify`, `audit ledger` and the timelines read through the archive.
 * `--dry-run` counts what would move.
 *
 * `tillflow archive erase-personal` removes personal data older than its retention: each
 * field named in `TILLFLOW_RETENTION_PERSONAL_FIELDS` after its own days, the others after
 * `--days` (else `TILLFLOW_RETENTION_PERSONAL_DAYS`, else 180); `--field NAME` removes that
 * field alone, after `--days` (else its configured days, else the default).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Stack from "@tillflow/intake/Stack"
import * as WorkerConfig from "@tillflow/intake/WorkerConfig"
import { EventArchive } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { BackendError } from "../Backend.js"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { boundedInteger, common } from "../internal/options.js"

const run = Command.make(
  "run",
  {
    json: common.json,
    dryRun: Options.boolean("dry-run").pipe(
      Options.withDescription("count what would be archived, move nothing")
    ),
    hotDays: boundedInteger("hot-days", 0, 36_500).pipe(
      Options.withDescription(
        `days a stream stays hot after its last event, 0 to 36500 (else ${EventArchive.hotDaysVariable}, else 90)`
      ),
      Options.optional
    ),
    batchSize: boundedInteger("batch-size", 1, 10_000).pipe(
      Options.withDescription(
        `streams moved per transaction, 1 to 10000 (default ${EventArchive.defaultBatchSize})`
      ),
      Options.optional
    )
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      const config = yield* WorkerConfig.load.pipe(
        Effect.mapError((error) => new BackendError({ message: `configuration: ${error.message}` }))
      )
      const days = Option.isSome(o.hotDays)
        ? o.hotDays.value
        : yield* EventArchive.hotDays.pipe(
            Effect.mapError((error) => new Output.UsageError({ message: String(error) }))
          )
      const before = EventArchive.cutoff(new Date(), days)
      const report = yield* Effect.flatMap(EventArchive.Archiver, (archiver) =>
        archiver.run({ before, dryRun: o.dryRun, batchSize: Option.getOrUndefined(o.batchSize) })
      ).pipe(
        Effect.mapError((error) => new BackendError({ message: `archiving: ${error.message}` })),
        Effect.provide(Stack.storeLayer(config.store, "cli archive")),
        Effect.scoped
      )
      yield* Output.print(o.json, report, () => [
        `${report.dryRun ? "would archive" : "archived"} ${report.events} events of ${report.streams} streams idle since before ${report.before.toISOString()} and ${report.executions} execution rows finished before it (${days} hot days)`
      ])
      return Output.ExitCode.ok
    })
  )
).pipe(
  Command.withDescription(
    "moves the events of streams idle, and the rows of executions finished, for longer than the hot retention into the archive"
  )
)

const erasePersonal = Command.make(
  "erase-personal",
  {
    json: common.json,
    days: boundedInteger("days", 0, 36_500).pipe(
      Options.withDescription(
        `days personal data is kept, 0 to 36500 (else ${EventArchive.personalDaysVariable}, else 180; a field in ${EventArchive.personalFieldsVariable} keeps its own)`
      ),
      Options.optional
    ),
    field: Options.text("field").pipe(
      Options.withDescription(
        "remove this field alone (the member name under which it is stored, e.g. cardHolderName)"
      ),
      Options.optional
    )
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      const config = yield* WorkerConfig.load.pipe(
        Effect.mapError((error) => new BackendError({ message: `configuration: ${error.message}` }))
      )
      const configured = yield* Effect.all([EventArchive.personalDays, EventArchive.personalFields]).pipe(
        Effect.mapError((error) => new Output.UsageError({ message: String(error) }))
      )
      const [defaultDays, fieldDays] = configured
      if (Option.isSome(o.field) && Either.isLeft(EventArchive.parsePersonalFields(`${o.field.value}:0`))) {
        return yield* new Output.UsageError({
          message: `--field must be a member name, got "${o.field.value}"`
        })
      }
      const cutoffs = Option.match(o.field, {
        // The named field alone: its days given, else configured for it, else the default.
        onSome: (field) =>
          EventArchive.personalCutoffs(new Date(), undefined, {
            [field]: Option.getOrElse(o.days, () => fieldDays[field] ?? defaultDays)
          }),
        onNone: () =>
          EventArchive.personalCutoffs(
            new Date(),
            Option.getOrElse(o.days, () => defaultDays),
            fieldDays
          )
      })
      const report = yield* Effect.flatMap(EventArchive.Archiver, (archiver) =>
        archiver.erasePersonal(cutoffs)
      ).pipe(
        Effect.mapError((error) => new BackendError({ message: `removing personal data: ${error.message}` })),
        Effect.provide(Stack.storeLayer(config.store, "cli archive")),
        Effect.scoped
      )
      const cut = [
        ...(report.before === undefined ? [] : [`before ${report.before.toISOString()}`]),
        ...Object.entries(report.fields).map(([name, at]) => `${name} before ${at.toISOString()}`)
      ]
      yield* Output.print(o.json, report, () => [
        `personal data removed from ${report.events} events (recorded ${cut.join("; ")}); every chain still verifies`
      ])
      return Output.ExitCode.ok
    })
  )
).pipe(
  Command.withDescription(
    "removes personal data older than its retention from hot and archived events, keeping every hash chain verifiable"
  )
)

export const archive = Command.make("archive").pipe(
  Command.withDescription("retention: the archive of the event log (read through by every read and audit)"),
  Command.withSubcommands([run, erasePersonal])
)
