/**
 * The command line's tests start real processes (workers, commands) that read DATABASE_URL.
 * Pointed at the shared database they met what earlier runs left there (a batch already
 * closed, a terminal's key held by an interrupted sale): with PostgreSQL, each run of this
 * project gets a database of its own, created here and dropped after it.
 */
import { TestDatabase } from "@tillflow/store-sql"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"

let scope: Scope.CloseableScope | undefined

export const setup = async (): Promise<void> => {
  if ((process.env["DATABASE_URL"] ?? "").trim() === "") return
  const opened = Effect.runSync(Scope.make())
  scope = opened
  const context = await Effect.runPromise(Layer.buildWithScope(TestDatabase.layer, opened))
  const url = Context.get(context, TestDatabase.TestDatabase).url
  if (Option.isSome(url)) process.env["DATABASE_URL"] = Redacted.value(url.value)
}

export const teardown = async (): Promise<void> => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
}
