/**
 * What the command line says and how it exits: human lines by default, one JSON document
 * with `--json`; a live progress line on stderr while a terminal works (only when stderr
 * is a terminal); and exit codes that tell a script how an operation ended:
 *
 * | code | meaning |
 * |---|---|
 * | 0 | done: approved, or the command succeeded (a display such as `executions show`, whatever the outcome) |
 * | 1 | tillflow could not do it: store or worker unreachable, unexpected failure, the merchant's rate limit reached (nothing started: try again) |
 * | 2 | usage: a bad argument or option, an unknown serial, a reused idempotency key |
 * | 3 | declined by the acquirer or issuer |
 * | 4 | failed, cancelled, rejected by the service, terminal unavailable, not charged, not found, an action a money rule refuses |
 * | 5 | approved, but only after an unknown outcome was reconciled |
 * | 6 | outcome still unknown (unresolved, stuck, or still running when the wait ended) |
 * | 7 | partially approved: part of the amount is still due |
 * | 8 | forbidden: the operator's role does not allow it (a viewer asking to act) |
 * | 130, 143 | stopped by SIGINT, SIGTERM: the operation goes on (`Handler.processExitCode`) |
 */
import type * as Intake from "@tillflow/intake/Intake"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Presentation from "./Presentation.js"

/** The exit codes (see the module's table). */
export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  declined: 3,
  failed: 4,
  reconciled: 5,
  unknown: 6,
  partial: 7,
  forbidden: 8
} as const

/** A bad argument: said on stderr, exit 2. */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", { message: Schema.String }) {}

/** The exit code of an execution as it stands. */
export const exitCodeOf = (view: Intake.ExecutionView): number => {
  const report = view.report
  if (report === undefined) {
    return view.status === "interrupted" || view.status === "failed" ? ExitCode.failed : ExitCode.unknown
  }
  switch (report.verdict) {
    case "approved":
      return report.reconciled ? ExitCode.reconciled : ExitCode.ok
    case "partially-approved":
      return ExitCode.partial
    case "declined":
      return ExitCode.declined
    case "unresolved":
    case "error":
      return ExitCode.unknown
    default:
      return ExitCode.failed
  }
}

/** The exit code of an intake error. */
export const exitCodeOfError = (error: Intake.IntakeError | UsageError): number => {
  switch (error._tag) {
    case "InvalidRequest":
    case "IdempotencyConflict":
    case "UsageError":
      return ExitCode.usage
    case "NotFound":
    case "ActionRefused":
      return ExitCode.failed
    case "Unavailable":
    case "RateLimited":
      return ExitCode.internal
    case "Forbidden":
      return ExitCode.forbidden
  }
}

const verdictMark: Record<string, string> = {
  approved: "APPROVED",
  "partially-approved": "PARTIALLY APPROVED",
  declined: "DECLINED",
  cancelled: "CANCELLED",
  failed: "FAILED",
  rejected: "REJECTED",
  unavailable: "TERMINAL UNAVAILABLE",
  "not-charged": "NOT CHARGED",
  unresolved: "OUTCOME UNKNOWN",
  "stop-refused": "STOP REFUSED",
  error: "ERROR"
}

/** Human lines of an execution: its verdict and summary, then what identifies it. */
export const describeExecution = (view: Intake.ExecutionView): ReadonlyArray<string> => {
  const a = view.attributes
  const what = [
    a["operation"] ?? view.workflow,
    a["amount"] === undefined ? undefined : `${a["amount"]} ${a["currency"] ?? ""}`.trim(),
    a["serialNumber"] === undefined ? undefined : `on ${a["serialNumber"]}`
  ]
    .filter((p) => p !== undefined)
    .join(" ")
  const head =
    view.report !== undefined
      ? `${verdictMark[view.report.verdict] ?? view.report.verdict}${view.report.reconciled && view.report.verdict === "approved" ? " (after reconciliation)" : ""}  ${Presentation.summaryOf(view)}`
      : `${view.status.toUpperCase()}  ${what}${view.progress === undefined ? "" : `: ${view.progress.phase}, waiting for ${view.progress.waitingFor}`}`
  const guid = Presentation.transactionIdOf(view)
  return [
    head,
    `  execution    ${view.executionId} (${view.workflow}, ${view.status === "succeeded" ? "completed" : view.status})`,
    ...(guid === undefined
      ? []
      : [`  guid         ${guid}  (--original-transaction-id of later operations)`]),
    ...(a["transactionReference"] === undefined ? [] : [`  reference    ${a["transactionReference"]}`]),
    ...(a["idempotencyKey"] === undefined ? [] : [`  key          ${a["idempotencyKey"]}`]),
    ...Presentation.batchLines(view)
  ]
}

/** Prints an execution: its `--json` document, or its human lines. */
export const printExecution = (json: boolean, view: Intake.ExecutionView): Effect.Effect<void> =>
  print(json, Presentation.executionJson(view), () => describeExecution(view))

/** Prints a value: JSON, or the human lines. */
export const print = (
  json: boolean,
  value: unknown,
  human: () => ReadonlyArray<string>
): Effect.Effect<void> =>
  json
    ? Console.log(JSON.stringify(value, jsonReplacer, 2))
    : Effect.forEach(human(), (line) => Console.log(line), { discard: true })

/** bigints as strings in JSON output. */
export const jsonReplacer = (_key: string, value: unknown): unknown =>
  typeof value === "bigint" ? value.toString() : value

/** Says something on stderr (never mixed into `--json` output). */
export const note = (text: string): Effect.Effect<void> =>
  Effect.sync(() => void process.stderr.write(`${text}\n`))

const isTty = (): boolean => process.stderr.isTTY === true

/** Draws the progress line (stderr, terminals only). */
export const progress = (text: string): Effect.Effect<void> =>
  Effect.sync(() => {
    if (!isTty()) return
    const width = Math.max(60, (process.stderr.columns ?? 100) - 1)
    process.stderr.write(`\r\x1b[2K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`)
  })

/** Clears the progress line. */
export const clearProgress: Effect.Effect<void> = Effect.sync(() => {
  if (isTty()) process.stderr.write("\r\x1b[2K")
})

const spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/** The progress line of an execution `elapsedMs` after it started. */
export const progressLine = (
  view: Intake.ExecutionView,
  elapsedMs: number,
  tick: number,
  now: number = Date.now()
): string => {
  const a = view.attributes
  const what = `${a["operation"] ?? view.workflow}${a["serialNumber"] === undefined ? "" : ` on ${a["serialNumber"]}`}`
  const phase = view.progress?.phase ?? view.status
  const waiting = view.progress?.waitingFor ?? "the engine"
  const attempt =
    view.progress !== undefined && view.progress.attempt > 1 ? ` (attempt ${view.progress.attempt})` : ""
  // The step last recorded and how long ago: the line moves with the steps, not one sentence throughout.
  const step = view.progress?.step
  const stepAt = view.progress?.stepAt
  const since =
    step === undefined
      ? ""
      : `; ${step}${stepAt === undefined ? "" : ` ${(Math.max(0, now - stepAt) / 1000).toFixed(1)} s ago`}`
  return `${spinner[tick % spinner.length] ?? "*"} ${what}: ${phase}${attempt}, ${(elapsedMs / 1000).toFixed(1)} s${since}; waiting for ${waiting}`
}

/** A colour (SGR) escape: `\x1b[1m`, `\x1b[0;31m` … Cursor moves (the progress line) are not colours. */
// eslint-disable-next-line no-control-regex
const colourEscape = /\u001b\[[0-9;]*m/g

/**
 * Makes a stream drop colour escapes when it is not a terminal or `NO_COLOR` is set
 * (no-color.org): @effect/cli prints some of its validation errors in colour whatever the
 * stream, which a script reading stderr would get as `\x1b[1m` noise.
 */
export const plainUnlessColour = (stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): void => {
  if (stream.isTTY === true && (env["NO_COLOR"] ?? "") === "") return
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: Array<unknown>) => boolean
  stream.write = ((chunk: unknown, ...rest: Array<unknown>) =>
    write(
      typeof chunk === "string" ? chunk.replace(colourEscape, "") : chunk,
      ...rest
    )) as typeof stream.write
}
