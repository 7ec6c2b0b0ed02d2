/**
 * `tillflow merchants` as an operator runs it (a process, this process's store): a merchant
 * registered, a key added from `TILLFLOW_MERCHANT_KEY` (never an argument), listed without
 * the key — by the CLI and in the database — then retired; without `TILLFLOW_KEK` the key
 * is refused with the reason; a merchant's acquirer and its own rate limit set and unset. The store is PostgreSQL's (the embedded one allows one process
 * at a time): skipped without DATABASE_URL.
 */
import { describe, expect, it } from "@effect/vitest"
import { TestDatabase } from "@tillflow/store-sql"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { cli } from "./support/Run.js"

const kek = `kek-1:${btoa(String.fromCharCode(...new Uint8Array(32).fill(5)))}`
const apiKey = "sk_live_cli_0123456789abcdef0123456789"

describe("tillflow merchants", () => {
  it.effect(
    "registers a merchant, adds a sealed key from the environment, lists it without the key, retires it",
    () =>
      Effect.gen(function* () {
        const database = yield* TestDatabase.TestDatabase
        if (Option.isNone(database.url)) return
        const env = { DATABASE_URL: Redacted.value(database.url.value), TILLFLOW_KEK: kek }
        const added = yield* cli(
          ["merchants", "add", "cafe-sol", "--name", "Café Sol", "--mcc", "5812", "--json"],
          env
        )
        expect(added.status, added.stderr).toBe(0)
        expect(JSON.parse(added.stdout)).toMatchObject({ id: "cafe-sol", enabled: true, keys: [] })
        const twice = yield* cli(["merchants", "add", "cafe-sol", "--name", "again", "--mcc", "5812"], env)
        expect(twice.status).toBe(2)
        expect(twice.stderr + twice.stdout).toContain("already registered")

        const noKek = yield* cli(["merchants", "add-key", "cafe-sol"], {
          DATABASE_URL: env.DATABASE_URL,
          TILLFLOW_MERCHANT_KEY: apiKey
        })
        expect(noKek.status).not.toBe(0)
        expect(noKek.stderr + noKek.stdout).toContain("TILLFLOW_KEK")

        const key = yield* cli(["merchants", "add-key", "cafe-sol", "--json"], {
          ...env,
          TILLFLOW_MERCHANT_KEY: apiKey
        })
        expect(key.status, key.stderr).toBe(0)
        const keyId = String(JSON.parse(key.stdout).keyId)
        expect(key.stdout + key.stderr).not.toContain(apiKey)

        const listed = yield* cli(["merchants", "list"], env)
        expect(listed.status, listed.stderr).toBe(0)
        expect(listed.stdout).toContain(`${keyId}  merchant  active`)
        expect(listed.stdout).not.toContain(apiKey)
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{
          readonly row: string
        }>`SELECT row_to_json(k)::text AS row FROM tillflow_merchant_keys k`
        expect(rows.map((r) => r.row).join("\n")).not.toContain(apiKey)

        const retired = yield* cli(["merchants", "retire-key", "cafe-sol", keyId, "--json"], env)
        expect(retired.status, retired.stderr).toBe(0)
        expect(JSON.parse(retired.stdout)).toMatchObject({ keyId, state: "retired" })
        const disabled = yield* cli(["merchants", "disable", "cafe-sol", "--json"], env)
        expect(JSON.parse(disabled.stdout)).toMatchObject({ enabled: false })

        // What a merchant's acquirer supports: at registration, changed, set back to the deployment's.
        const split = yield* cli(
          [
            "merchants",
            "add",
            "split-bar",
            "--name",
            "Split Bar",
            "--mcc",
            "5812",
            "--partial-reversal",
            "yes"
          ],
          env
        )
        expect(split.status, split.stderr).toBe(0)
        expect(split.stdout).toContain("partial reversals yes")
        const changed = yield* cli(
          ["merchants", "acquirer", "split-bar", "--capture-reversal", "no", "--json"],
          env
        )
        expect(changed.status, changed.stderr).toBe(0)
        expect(JSON.parse(changed.stdout)).toMatchObject({ partialReversal: true, captureReversal: false })
        const back = yield* cli(
          ["merchants", "acquirer", "split-bar", "--partial-reversal", "default", "--json"],
          env
        )
        expect(back.status, back.stderr).toBe(0)
        const shown = JSON.parse(back.stdout)
        expect([shown.partialReversal, shown.captureReversal]).toEqual([undefined, false])
        const wrong = yield* cli(["merchants", "acquirer", "split-bar", "--partial-reversal", "maybe"], env)
        expect(wrong.status).not.toBe(0)
        expect(wrong.stderr + wrong.stdout).toContain("yes")

        // A merchant's own rate limit: at registration, changed with its burst, set back to the deployment's.
        const rush = yield* cli(
          ["merchants", "add", "rush-bar", "--name", "Rush Bar", "--mcc", "5812", "--rate-limit", "20/s"],
          env
        )
        expect(rush.status, rush.stderr).toBe(0)
        expect(rush.stdout).toContain("rate limit 20/s (burst 20)")
        const slower = yield* cli(
          ["merchants", "rate-limit", "rush-bar", "600/min", "--rate-burst", "30", "--json"],
          env
        )
        expect(slower.status, slower.stderr).toBe(0)
        expect(JSON.parse(slower.stdout).rateLimit).toEqual({ count: 600, intervalMillis: 60_000, burst: 30 })
        const deployment = yield* cli(["merchants", "rate-limit", "rush-bar", "default"], env)
        expect(deployment.status, deployment.stderr).toBe(0)
        expect(deployment.stdout).toContain("rate limit: the deployment's")
        const fast = yield* cli(["merchants", "rate-limit", "rush-bar", "20/h"], env)
        expect(fast.status).toBe(2)
        expect(fast.stderr + fast.stdout).toContain(
          "the rate limit must be operations started per second or per minute"
        )
      }).pipe(Effect.provide(TestDatabase.layer)),
    240_000
  )

  it.effect(
    "TILLFLOW_MERCHANT names the merchant a command acts for: a disabled one's sale is refused with the rule, a malformed one is refused",
    () =>
      Effect.gen(function* () {
        const database = yield* TestDatabase.TestDatabase
        if (Option.isNone(database.url)) return
        const env = {
          DATABASE_URL: Redacted.value(database.url.value),
          TILLFLOW_KEK: kek,
          TILLFLOW_SIMULATOR_FAST: "true"
        }
        expect(
          (yield* cli(["merchants", "add", "tea-house", "--name", "Tea House", "--mcc", "5812"], env)).status
        ).toBe(0)
        expect((yield* cli(["merchants", "disable", "tea-house"], env)).status).toBe(0)
        const refused = yield* cli(["sale", "--serial", "T-1", "--amount", "12.50", "--currency", "EUR"], {
          ...env,
          TILLFLOW_MERCHANT: "tea-house"
        })
        expect(refused.status).not.toBe(0)
        expect(refused.stderr + refused.stdout).toContain("merchant tea-house is disabled")
        const malformed = yield* cli(["sale", "--serial", "T-1", "--amount", "12.50", "--currency", "EUR"], {
          ...env,
          TILLFLOW_MERCHANT: "tea house"
        })
        expect(malformed.status).not.toBe(0)
        expect(malformed.stderr + malformed.stdout).toContain("TILLFLOW_MERCHANT must be a merchant id")
      }).pipe(Effect.provide(TestDatabase.layer)),
    240_000
  )
})
