/**
 * End to end, as an operator runs it: the worker started as `npm start` starts it (the
 * launcher `apps/worker/bin/start.mjs`: bundled, plain node; here into a build folder of
 * the test's own) on embedded defaults (a temporary data folder, port 0, the built-in
 * simulator), driven through its
 * intake API over HTTP and through the `tillflow` command line as another process, then
 * stopped with SIGTERM, and its ledger read back with `tillflow audit` from the folder.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Processes from "./support/Processes.js"

const worker = "apps/worker/bin/start.mjs"
const cli = "apps/cli/src/main.ts"

const http = (url: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    const text = await response.text()
    let body: unknown = undefined
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
    return { status: response.status, body, text }
  })

interface View {
  readonly executionId: string
  readonly status: string
  readonly attributes: Record<string, string>
  readonly report?: { readonly verdict: string; readonly finStatus?: string; readonly amount?: string }
}

describe("the worker as a process", () => {
  it.live(
    "serves health without a token, refuses the rest without it, runs sales from the API and the CLI (through it, then in its own process) and a terminal-less reversal, stops on SIGTERM, and its ledger replays",
    () =>
      Effect.gen(function* () {
        const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-e2e-"))
        const dataDir = Path.join(folder, "data")
        const buildDir = Processes.testBuildDir()
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => Fs.rmSync(buildDir, { recursive: true, force: true }))
        )
        const env = Processes.cleanEnv({
          TILLFLOW_DATA_DIR: dataDir,
          TILLFLOW_INTAKE_PORT: "0",
          TILLFLOW_LOG_LEVEL: "Warning",
          TILLFLOW_WORKER_BUILD_DIR: buildDir
        })
        const running = yield* Processes.start(worker, [], env)
        // The banner on stderr; stdout holds the JSON log lines.
        const [, intake] = yield* running.waitFor(/ {2}intake {6}(http:\/\/\S+)/, 180_000, "stderr")
        const [, token] = yield* running.waitFor(/ {2}token {7}(\S+)/, 5_000, "stderr")
        const [, simulator] = yield* running.waitFor(/ {2}simulator {3}(http:\/\/\S+)/, 5_000, "stderr")
        const [, serial] = yield* running.waitFor(/ {2}terminals {3}(\S+) /, 5_000, "stderr")
        expect(running.stderr()).toContain("BUILT-IN SIMULATOR")
        expect(running.stderr()).toContain("no fsync")
        const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" }

        // Health answers anyone; nothing else does without the token.
        const health = yield* http(`${intake}/health`)
        expect(health.status).toBe(200)
        expect(health.body).toEqual({ status: "ok" })
        expect((yield* http(`${intake}/ready`)).status).toBe(200)
        expect((yield* http(`${intake}/v1/devices`)).status).toBe(401)
        expect(
          (yield* http(`${intake}/v1/executions`, { headers: { authorization: "Bearer not-the-token" } }))
            .status
        ).toBe(401)
        expect((yield* http(`${intake}/metrics`)).status).toBe(401)
        // The reference holds no secret: served without the token.
        const openapi = yield* http(`${intake}/openapi.json`)
        expect(openapi.status).toBe(200)
        expect(Object.keys((openapi.body as { paths: object }).paths)).toContain("/v1/operations")

        // A sale through the intake API; the same key answers the same execution.
        const sale = {
          idempotencyKey: "order-1",
          request: { operation: "sale", serial_number: serial, amount: "1050", currency: "EUR" },
          waitSeconds: 120
        }
        const first = yield* http(`${intake}/v1/operations`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify(sale)
        })
        expect(first.status).toBe(200)
        const view = first.body as View
        expect(view.status).toBe("succeeded")
        expect(view.report?.verdict).toBe("approved")
        expect(view.report?.finStatus).toBe("AUTHORISED")
        expect(view.attributes["amount"]).toBe("10.50")
        const again = yield* http(`${intake}/v1/operations`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify(sale)
        })
        expect((again.body as View).executionId).toBe(view.executionId)
        expect((again.body as View).report?.verdict).toBe("approved")
        const conflict = yield* http(`${intake}/v1/operations`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ ...sale, request: { ...sale.request, amount: "2000" } })
        })
        expect(conflict.status).toBe(409)
        const bad = yield* http(`${intake}/v1/operations`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({
            ...sale,
            idempotencyKey: "order-2",
            request: { ...sale.request, amount: "10.50" }
          })
        })
        expect(bad.status).toBe(400)
        expect(bad.text).toContain("minor units")
        // The sale's history opens by itself (the worker follows the log), with no later
        // operation asking for it: the audit's conservation check sees the transaction.
        const firstGuid = (first.body as { result?: { value?: { facts?: { efttransactionID?: string } } } })
          .result?.value?.facts?.efttransactionID
        expect(firstGuid).toEqual(expect.any(String))
        let checked = 0
        for (let i = 0; i < 100 && checked === 0; i++) {
          const verified = yield* http(`${intake}/v1/audit/verify?stream=txn-${firstGuid}`, { headers: auth })
          checked =
            (verified.body as { conservation?: { transactionsChecked?: number } }).conservation
              ?.transactionsChecked ?? 0
          if (checked === 0) yield* Effect.sleep("100 millis")
        }
        expect(checked).toBe(1)
        // The simulator charged once for the two identical requests.
        const counters = yield* http(`${simulator}/_sim/counters`)
        expect(JSON.stringify(counters.body)).toContain('"charges":1')

        // A sale through the command line: it finds the worker through the data folder's lock.
        const viaCli = yield* Processes.runToEnd(
          cli,
          [
            "sale",
            "--serial",
            serial,
            "--amount",
            "20.00",
            "--currency",
            "EUR",
            "--key",
            "order-3",
            "--json",
            // Which backend a command runs against is said only when asked for.
            "--verbose"
          ],
          env,
          120_000
        )
        expect(viaCli.stderr).toContain(`the worker at ${intake}`)
        expect(viaCli.code).toBe(0)
        // The command line's --json document: the outcome as `status`, money as one amount form.
        const cliView = JSON.parse(viaCli.stdout) as {
          readonly executionId: string
          readonly status: string
          readonly amount: { readonly amount: string; readonly currency: string }
        }
        expect(cliView.status).toBe("approved")
        expect(cliView.amount).toEqual({ amount: "20.00", currency: "EUR" })

        // A terminal-less reversal of the first sale, by its gateway guid.
        const guid = (view as unknown as { result: { value: { facts: { efttransactionID: string } } } })
          .result.value.facts.efttransactionID
        const reversal = yield* http(`${intake}/v1/lifecycle/Reversal.Reverse`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ payload: { requestId: "reverse-1", originalGuid: guid }, waitSeconds: 120 })
        })
        expect(reversal.status).toBe(200)
        expect((reversal.body as View).report?.verdict).toBe("approved")

        // The history, the list and the metrics see both.
        const listed = yield* http(`${intake}/v1/executions?operation=sale`, { headers: auth })
        expect((listed.body as ReadonlyArray<View>).map((v) => v.executionId).sort()).toEqual(
          [view.executionId, cliView.executionId].sort()
        )
        const history = yield* http(`${intake}/v1/executions/${view.executionId}/history`, { headers: auth })
        const types = (history.body as { business: ReadonlyArray<{ type: string }> }).business.map(
          (e) => e.type
        )
        expect(types).toContain("AttemptAccepted")
        expect(types).toContain("PaymentAuthorised")
        const metrics = yield* http(`${intake}/metrics`, { headers: auth })
        expect(metrics.text).toMatch(/tillflow_operation_outcomes_total\{[^}]*operation="sale"[^}]*\} 2/)
        expect(metrics.text).toMatch(
          /tillflow_executions\{[^}]*status="succeeded"[^}]*workflow="TerminalOperation"[^}]*\} 2|tillflow_executions\{[^}]*workflow="TerminalOperation"[^}]*status="succeeded"[^}]*\} 2/
        )
        expect(metrics.text).toMatch(/tillflow_callback_deliveries_total\{result="recorded"\} 2/)

        // The live ledger projection snapshots within seconds; a rebuild from scratch equals it.
        yield* Effect.gen(function* () {
          while ((yield* http(`${intake}/v1/audit/ledger?source=live`, { headers: auth })).status !== 200) {
            yield* Effect.sleep("500 millis")
          }
        }).pipe(Effect.timeout("30 seconds"))
        const rebuild = yield* http(`${intake}/v1/audit/rebuild`, { headers: auth })
        expect(rebuild.body).toMatchObject({ compared: true, equal: true })

        // SIGTERM: a clean exit, and the folder's lock is released.
        const code = yield* running.terminate(60_000)
        expect(code).toBe(0)
        expect(Fs.existsSync(`${dataDir}.lock`)).toBe(false)

        // With no worker, the command line runs the workflow in its own process on the folder
        // (and its own built-in simulator, same seed, same serials).
        const inProcess = yield* Processes.runToEnd(
          cli,
          ["sale", "--serial", serial, "--amount", "5.00", "--key", "order-4", "--json"],
          env,
          180_000
        )
        expect(inProcess.stderr).toContain("this process on the embedded store")
        expect(inProcess.code).toBe(0)
        expect((JSON.parse(inProcess.stdout) as { readonly status: string }).status).toBe("approved")

        // The ledger, replayed from the folder by the command line in its own process.
        const ledger = yield* Processes.runToEnd(
          cli,
          ["audit", "ledger", "--by", "terminal", "--json"],
          env,
          120_000
        )
        expect(ledger.code).toBe(0)
        const parsed = JSON.parse(ledger.stdout) as {
          readonly entries: number
          readonly rows: ReadonlyArray<{
            terminal: string
            currency: string
            sale: { count: number; amount: string }
            net: string
          }>
        }
        expect(parsed.entries).toBe(4)
        expect(parsed.rows).toEqual([
          // The terminal-less reversal of a terminal sale is booked on the sale's terminal.
          expect.objectContaining({
            terminal: serial,
            currency: "EUR",
            sale: { count: 3, amount: "35.50" },
            reversal: { count: 1, amount: "10.50" },
            net: "25.00"
          })
        ])
        const verify = yield* Processes.runToEnd(cli, ["audit", "verify"], env, 120_000)
        expect(verify.code).toBe(0)
        expect(verify.stdout).toContain("every hash chain intact")
        Fs.rmSync(folder, { recursive: true, force: true })
      }).pipe(Effect.scoped),
    600_000
  )
})
