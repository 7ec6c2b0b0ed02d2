/**
 * `tillflow archive run` as an operator runs it, on PostgreSQL (the embedded store allows one
 * process at a time; without DATABASE_URL only the usage case runs): a dry run moves nothing;
 * a run SIGKILLed midway leaves every event either hot or archived, once, no stream split;
 * the next run moves the rest, a third moves nothing; personal data is removed
 * (`archive erase-personal`); `audit verify` still proves every chain.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore, HashChain } from "@tillflow/engine"
import { TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { run as runCli } from "./support/Run.js"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
const cliArgs = ["--conditions=@tillflow/source", "--import", "tsx", "apps/cli/src/main.ts"]

/** `tillflow args…` as a process of its own (asynchronous: the test's worker keeps answering vitest). */
const cli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.promise(() => runCli(args, env))

describe("tillflow archive run", () => {
  it("refuses a negative --hot-days (exit 2)", async () => {
    const run = await runCli(["archive", "run", "--hot-days", "-1"], {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none"
    })
    expect(run.status, run.stderr).toBe(2)
    expect(run.stdout + run.stderr).toContain("--hot-days must be from 0 to 36500")
  }, 120_000)

  it.live(
    "killed (SIGKILL) midway loses nothing and copies nothing; the next run finishes; audit verify proves it all",
    () =>
      Effect.gen(function* () {
        const database = yield* TestDatabase.TestDatabase
        if (Option.isNone(database.url)) return
        const env = { DATABASE_URL: Redacted.value(database.url.value) }
        const store = yield* EventStore.EventStore
        const sql = yield* SqlClient.SqlClient
        const streams = 3000 + 1
        yield* Effect.forEach(
          Array.from({ length: streams - 1 }, (_, i) => `archived-${i}`),
          (stream) =>
            store.append(stream, EventStore.NoStream, [
              { type: "Happened", data: { n: 1 } },
              { type: "Happened", data: { n: 2 } }
            ]),
          { concurrency: 16, discard: true }
        )
        yield* store.append("personal-0", EventStore.NoStream, [
          {
            type: "MotoSaleRequested",
            data: { amount: "100", billing: HashChain.personal({ name: "Ada Lovelace" }) }
          },
          { type: "Happened", data: { n: 2 } }
        ])
        yield* sql`UPDATE streams SET updated_at = now() - interval '100 days'`
        const count = (table: "events" | "events_archive") =>
          Effect.map(sql<{ readonly n: string }>`SELECT count(*)::text AS n FROM ${sql(table)}`, ([row]) =>
            Number(row?.n ?? 0)
          )

        const dry = yield* cli(["archive", "run", "--dry-run", "--json", "--hot-days", "30"], env)
        expect(dry.status, dry.stderr).toBe(0)
        expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, streams, events: 2 * streams })
        expect(yield* count("events_archive")).toBe(0)

        // Killed once the first batches are in the archive.
        const child = spawn(
          process.execPath,
          [...cliArgs, "archive", "run", "--hot-days", "30", "--batch-size", "2"],
          {
            cwd: root,
            env: { ...process.env, ...env },
            stdio: "ignore"
          }
        )
        const ended = new Promise<NodeJS.Signals | null>((resolve) =>
          child.on("exit", (_, signal) => resolve(signal))
        )
        while ((yield* count("events_archive")) === 0) yield* Effect.sleep("5 millis")
        child.kill("SIGKILL")
        expect(yield* Effect.promise(() => ended)).toBe("SIGKILL")
        const hot = yield* count("events")
        const archived = yield* count("events_archive")
        expect(hot).toBeGreaterThan(0)
        expect(archived).toBeGreaterThan(0)
        expect(hot + archived).toBe(2 * streams)
        const [split] = yield* sql<{ readonly n: string }>`
          SELECT count(*)::text AS n FROM (SELECT DISTINCT stream_id FROM events) AS h
          JOIN (SELECT DISTINCT stream_id FROM events_archive) AS a USING (stream_id)`
        expect(split?.n).toBe("0")

        const rest = yield* cli(["archive", "run", "--json", "--hot-days", "30"], env)
        expect(rest.status, rest.stderr).toBe(0)
        expect(JSON.parse(rest.stdout)).toMatchObject({ dryRun: false, events: hot })
        expect(yield* count("events")).toBe(0)
        expect(yield* count("events_archive")).toBe(2 * streams)
        const none = yield* cli(["archive", "run", "--json", "--hot-days", "30"], env)
        expect(JSON.parse(none.stdout)).toMatchObject({ streams: 0, events: 0 })

        const erased = yield* cli(["archive", "erase-personal", "--days", "0", "--json"], env)
        expect(erased.status, erased.stderr).toBe(0)
        expect(JSON.parse(erased.stdout)).toMatchObject({ events: 1 })
        expect(JSON.stringify((yield* store.readStream("personal-0")).map((e) => e.data))).not.toContain(
          "Lovelace"
        )

        const verify = yield* cli(["audit", "verify", "--json"], env)
        expect(verify.status, verify.stderr).toBe(0)
        expect(JSON.parse(verify.stdout)).toMatchObject({
          streamsChecked: streams,
          eventsChecked: 2 * streams,
          broken: []
        })
      }).pipe(Effect.provide(TestDatabase.layer)),
    240_000
  )

  it.live(
    "erase-personal --field removes that field alone; the event's other personal field stays and the chain verifies",
    () =>
      Effect.gen(function* () {
        const refused = yield* cli(["archive", "erase-personal", "--field", "a.b"], {
          DATABASE_URL: "postgres://nobody@127.0.0.1:1/none"
        })
        expect(refused.status, refused.stderr).toBe(2)
        expect(refused.stdout + refused.stderr).toContain("--field must be a member name")
        const database = yield* TestDatabase.TestDatabase
        if (Option.isNone(database.url)) return
        const env = { DATABASE_URL: Redacted.value(database.url.value) }
        const store = yield* EventStore.EventStore
        yield* store.append("personal-fields", EventStore.NoStream, [
          {
            type: "ResultRecorded",
            data: {
              billing: HashChain.personal({ zipCode: "SW1Y", address: "12 St James's Square" }),
              result: { cardHolderName: HashChain.personal("ADA LOVELACE") }
            }
          }
        ])
        const erased = yield* cli(
          ["archive", "erase-personal", "--field", "cardHolderName", "--days", "0", "--json"],
          env
        )
        expect(erased.status, erased.stderr).toBe(0)
        expect(JSON.parse(erased.stdout)).toMatchObject({ events: 1 })
        const text = JSON.stringify((yield* store.readStream("personal-fields")).map((e) => e.data))
        expect(text).not.toContain("LOVELACE")
        expect(text).toContain("St James")
        expect((yield* store.verify("personal-fields")).broken).toEqual([])
      }).pipe(Effect.provide(TestDatabase.layer)),
    120_000
  )
})
