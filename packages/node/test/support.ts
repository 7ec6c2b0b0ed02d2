/**
 * Test support: an instance of the Promise API on a fresh database (the PostgreSQL of
 * `DATABASE_URL` through `TestDatabase`, else an embedded store in a temporary directory)
 * and the built-in simulator with instant steps; the simulator's admin API; and the Effect
 * API run on the same instance's runtime, so both APIs meet the same store, engine and
 * terminals.
 */
import { TestDatabase } from "@tillflow/store-sql"
import type * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { createTillflow, type Tillflow, type TillflowOptions } from "../src/index.js"
import type * as Services from "../src/internal/Services.js"

/** An instance and how to release it with its database. */
export interface Harness {
  readonly tf: Tillflow
  /** The PostgreSQL database of the instance (none on the embedded store, which one process holds). */
  readonly databaseUrl: string | undefined
  readonly release: () => Promise<void>
}

/** An instance on a fresh database and the fast built-in simulator (`options` over those). */
export const harness = async (options: TillflowOptions = {}): Promise<Harness> => {
  const database = ManagedRuntime.make(TestDatabase.layer)
  const info = await database.runPromise(TestDatabase.TestDatabase)
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-node-"))
  const tf = await createTillflow({
    database: Option.match(info.url, {
      onNone: () => ({ dataDir }),
      onSome: (url) => Redacted.value(url)
    }),
    terminalCloud: { simulator: { fast: true, seed: 11 } },
    readEnvironment: false,
    ...options
  })
  return {
    tf,
    databaseUrl: Option.getOrUndefined(Option.map(info.url, Redacted.value)),
    release: async () => {
      await tf.close()
      await database.dispose()
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** Calls the built-in simulator's admin API. */
export const admin = async (tf: Tillflow, method: string, path: string, body?: unknown): Promise<unknown> => {
  const response = await fetch(`${tf.info.simulatorAdminUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  if (!response.ok) throw new Error(`admin ${method} ${path}: ${response.status} ${await response.text()}`)
  return response.json()
}

/** Runs an Effect program of the Effect API on the instance's runtime. */
export const runEffect = <A, E>(
  tf: Tillflow,
  effect: Effect.Effect<A, E, Services.Services>
): Promise<Exit.Exit<A, E | unknown>> => tf.runtime.runPromiseExit(effect)

/** Waits until `check` holds, reading it every 100 ms, for at most `millis`. */
export const eventually = async (check: () => Promise<boolean>, millis = 20_000): Promise<void> => {
  const until = Date.now() + millis
  while (!(await check())) {
    if (Date.now() > until) throw new Error("the condition did not hold in time")
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * Waits until the global log shows the transaction of `transactionReference` (a ledger
 * entry): the log is read below the oldest transaction open on the PostgreSQL cluster,
 * so on a busy cluster a terminal operation's events become readable a moment after it
 * ended, and a terminal-less operation on it started before then would not find it.
 */
export const recorded = (tf: Tillflow, transactionReference: string): Promise<void> =>
  eventually(async () => {
    const { entries } = (await tf.audit.entries({ limit: 10_000 })) as {
      readonly entries: ReadonlyArray<{ readonly transactionReference?: string }>
    }
    return entries.some((entry) => entry.transactionReference === transactionReference)
  })
