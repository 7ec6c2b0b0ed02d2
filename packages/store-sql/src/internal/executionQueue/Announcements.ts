/**
 * The execution queue's announcements on its LISTEN/NOTIFY channel: the ids of executions
 * that became due or finished, sent after the statement that changed them commits
 * (`make`), and heard from the other processes (`changes`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { ExecutionQueue } from "@tillflow/engine"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ExecutionQueueMigrations from "../../ExecutionQueueMigrations.js"
import * as Channel from "../Channel.js"
import { failure } from "./Rows.js"
import * as Statements from "./Statements.js"

/**
 * The most UTF-8 bytes of execution ids (and separators) one notification carries:
 * PostgreSQL refuses a payload of 8000 bytes or more.
 */
const maxPayloadBytes = 7_900

const utf8Length = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    // A surrogate pair is two code units and four bytes.
    bytes += code < 0x80 ? 1 : code < 0x800 || (code >= 0xd800 && code < 0xe000) ? 2 : 3
  }
  return bytes
}

/**
 * Execution ids as notification payloads: ids separated by a newline, each payload under
 * PostgreSQL's limit. An id longer than the limit alone is left out (it would fail the
 * whole NOTIFY); a notification is only a wake-up, and listeners poll anyway.
 */
export const payloads = (ids: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  let current = ""
  let bytes = 0
  for (const id of ids) {
    const length = utf8Length(id)
    if (length === 0 || length > maxPayloadBytes) continue
    if (current !== "" && bytes + 1 + length > maxPayloadBytes) {
      out.push(current)
      current = ""
      bytes = 0
    }
    current = current === "" ? id : current + "\n" + id
    bytes += (bytes === 0 ? 0 : 1) + length
  }
  if (current !== "") out.push(current)
  return out
}

/** The ids announced by other processes (and this one), or none without LISTEN. */
export const changes = (
  listen: Option.Option<Channel.Listen>,
  local: Option.Option<Channel.Local> = Option.none(),
  self: object = {}
): Stream.Stream<string, ExecutionQueue.ExecutionQueueError> =>
  Option.match(listen, {
    onNone: () => Stream.never,
    onSome: (listen) =>
      (Option.isSome(local)
        ? local.value.listen(ExecutionQueueMigrations.channel, self)
        : listen(ExecutionQueueMigrations.channel)
      ).pipe(
        // A notification carries one or more ids, one per line (`payloads`).
        Stream.mapConcat((payload) => payload.split("\n").filter((id) => id !== "")),
        Stream.mapError(failure("listen"))
      )
  })

/** Announces the ids of executions that became due or finished. */
export type Announce = (ids: ReadonlyArray<string>) => Effect.Effect<void, SqlError>

/**
 * Announces ids after the statement that made them commits, by one fiber, at most one
 * NOTIFY statement per `notifyInterval`: the first announcement after a quiet spell goes at
 * once, the ones made while a NOTIFY is in flight or within the interval after it go
 * together in the next, as few notifications as their size allows (`payloads`). A NOTIFY
 * inside the enqueuing, releasing or waking transaction would take PostgreSQL's
 * server-wide notify lock from pre-commit until after the WAL flush, so concurrent commits
 * could not share a flush; one NOTIFY per change cost a statement per change and woke
 * every listening process (this one included) once per id. An announcement only hastens
 * a wake-up: workers and waiting callers poll anyway, so one delayed by the interval or
 * lost to a failure costs latency, not work.
 */
export const make = (
  sql: SqlClient.SqlClient,
  notifyInterval: Duration.Duration,
  local: Option.Option<Channel.Local> = Option.none(),
  self: object = {}
): Effect.Effect<Announce, never, Scope.Scope> =>
  Effect.gen(function* () {
    const notify = (ids: ReadonlyArray<string>) => {
      const texts = payloads(ids)
      return texts.length === 0
        ? Effect.void
        : Effect.asVoid(Effect.uninterruptible(Statements.notify(sql, texts)))
    }
    // On PGlite, what committed already is announced in process, without a statement.
    const send = (ids: ReadonlyArray<string>) =>
      Option.isSome(local)
        ? local.value.publish(ExecutionQueueMigrations.channel, payloads(ids), self)
        : notify(ids)
    const pending = yield* Queue.unbounded<string>()
    yield* Channel.forkThrottled({
      next: Queue.take(pending).pipe(
        Effect.flatMap((first) => Effect.map(Queue.takeAll(pending), (rest) => new Set([first, ...rest])))
      ),
      send: (ids) => send(Array.from(ids)),
      interval: notifyInterval,
      failed: "Execution queue NOTIFY failed; workers poll"
    })
    // Inside a caller's transaction the NOTIFY goes with it (delivered at its commit): sent
    // from the fiber, it could arrive before the change is visible, or for a rollback.
    const announce: Announce = (ids) =>
      ids.length === 0
        ? Effect.void
        : Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
            Option.isSome(transaction) ? notify(ids) : Effect.asVoid(Queue.offerAll(pending, ids))
          )
    return announce
  })
