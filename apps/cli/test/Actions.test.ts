/**
 * `tillflow transactions act` as an operator runs it (a process, this process's store):
 * confirmed first with its amount and currency (without `--yes` and no terminal to ask on:
 * exit 2, nothing opened); a money rule's refusal printed with its rule (exit 4, one JSON
 * error under `--json`); an action started and recorded with the operator and reason, run
 * twice acting once. The seeded store is PostgreSQL's (the embedded one allows one process
 * at a time): without DATABASE_URL only the confirmation case runs.
 */
import { describe, expect, it } from "@effect/vitest"
import { LifecycleEvent, Money, TransactionHistory } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import { TestDatabase } from "@tillflow/store-sql"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { cli, run as runCli } from "./support/Run.js"

const act = (guid: string, args: ReadonlyArray<string>) => [
  "transactions",
  "act",
  guid,
  "--reason",
  "the customer returned the goods",
  "--operator",
  "ana",
  ...args
]

describe("tillflow transactions act", () => {
  it("asks for confirmation with the amount and currency: without --yes off a terminal, exit 2 and nothing opened", async () => {
    const dataDir = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-cli-")), "data")
    const run = await runCli(
      act("sale-1", ["--action", "refund", "--amount", "15.00", "--currency", "EUR"]),
      {
        TILLFLOW_DATA_DIR: dataDir
      }
    )
    expect(run.status, run.stderr).toBe(2)
    expect(run.stderr).toContain("refund of 15.00 EUR on transaction sale-1: not confirmed; add --yes")
    expect(Fs.existsSync(dataDir)).toBe(false)
  }, 120_000)

  it.effect(
    "a refund above the sale is refused with its rule (exit 4); a reversal is started once and recorded with the operator",
    () =>
      Effect.gen(function* () {
        const database = yield* TestDatabase.TestDatabase
        if (Option.isNone(database.url)) return
        const env = { DATABASE_URL: Redacted.value(database.url.value) }
        const store = yield* EventStore.EventStore
        const guid = "5f6e7d8c-9b0a-4c1d-8e2f-3a4b5c6d7e8f"
        yield* TransactionHistory.record(store, {
          guid,
          kind: "sale",
          amount: Money.make(5000n, "EUR"),
          at: yield* DateTime.now
        })
        const above = yield* cli(
          act(guid, ["--action", "refund", "--amount", "60.00", "--currency", "EUR", "--yes", "--json"]),
          env
        )
        expect(above.status, above.stderr).toBe(4)
        expect(JSON.parse(above.stdout)).toMatchObject({
          error: "ActionRefused",
          rule: "refund-not-above-sale"
        })
        expect(above.stderr).toContain("refund of 60.00 EUR on transaction")
        const reverse = () => cli(act(guid, ["--action", "reverse", "--yes", "--json"]), env)
        const first = yield* reverse()
        expect(first.status, first.stderr).toBe(0)
        const view = JSON.parse(first.stdout) as { executionId: string; workflow: string }
        expect(view.workflow).toBe("Reversal.Reverse")
        const second = yield* reverse()
        expect(second.status, second.stderr).toBe(0)
        expect((JSON.parse(second.stdout) as { executionId: string }).executionId).toBe(view.executionId)
        const events = yield* LifecycleEvent.registry.decodeAll(
          yield* store.readStream(LifecycleEvent.transactionStream(guid))
        )
        const recorded = events.filter((e) => e.type === "OperatorActionRequested")
        expect(recorded.map((e) => e.data)).toMatchObject([
          { action: "reverse", operator: "ana", via: "operator", reason: "the customer returned the goods" }
        ])
      }).pipe(Effect.provide(TestDatabase.layer)),
    240_000
  )
})
