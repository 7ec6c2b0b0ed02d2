/**
 * The worker's output as an operator reads it, under `tillflow worker` (the command line's
 * worker command, which installs a logger of its own): the banner on stderr, naming the
 * callback address in use; stdout only JSON log lines, one per record; one line per
 * outcome with its execution, operation, terminal and amount and no card data; a refused
 * request (4xx) logged at INFO with what was refused and no stack trace.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Processes from "./support/Processes.js"

const cli = "apps/cli/src/main.ts"
const token = "worker-logs-test-token"

const freePort = Effect.promise(
  () =>
    new Promise<number>((resolve, reject) => {
      const server = Net.createServer()
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        server.close(() => resolve(port))
      })
    })
)

const post = (url: string, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  })

type Line = Record<string, unknown> & {
  readonly message: unknown
  readonly logLevel: string
  readonly annotations: Record<string, unknown>
}

const lines = (text: string): ReadonlyArray<string> => text.split("\n").filter((line) => line.length > 0)

describe("the worker's logs under tillflow worker", () => {
  it.live(
    "banner on stderr with the configured callback address, stdout one JSON line per record, one outcome line without card data, a 4xx at INFO without a stack",
    () =>
      Effect.gen(function* () {
        const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-logs-"))
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => Fs.rmSync(folder, { recursive: true, force: true }))
        )
        const port = yield* freePort
        // The receiver on this worker, by another name than the loopback address the banner
        // would name without the setting.
        const callbacks = `http://localhost:${port}/callbacks`
        const env = Processes.cleanEnv({
          TILLFLOW_DATA_DIR: Path.join(folder, "data"),
          TILLFLOW_INTAKE_PORT: String(port),
          TILLFLOW_INTAKE_TOKEN: token,
          TILLFLOW_CALLBACK_BASE_URL: callbacks,
          TILLFLOW_SIMULATOR_FAST: "true"
        })
        const running = yield* Processes.start(cli, ["worker"], env)
        // The log record that follows the banner.
        yield* running.waitFor(/"message":"tillflow worker started"/, 180_000)
        const intake = `http://127.0.0.1:${port}`

        // The banner is on stderr and names the callback address configured.
        expect(running.stderr()).toContain("tillflow worker started")
        expect(running.stderr()).toContain(`  callbacks   ${callbacks}`)
        const serial = running.stderr().match(/ {2}terminals {3}(\S+) /)?.[1] ?? ""

        const sale = yield* post(`${intake}/v1/operations`, {
          idempotencyKey: "logs-1",
          request: { operation: "sale", serial_number: serial, amount: "1050", currency: "EUR" },
          waitSeconds: 120
        })
        expect(sale.status).toBe(200)
        const executionId = sale.body["executionId"]
        const facts = (sale.body["result"] as { value: { facts: Record<string, string> } }).value.facts
        const refused = yield* post(`${intake}/v1/operations`, {
          idempotencyKey: "logs-2",
          request: { operation: "sale", serial_number: serial, amount: "10.50", currency: "EUR" }
        })
        expect(refused.status).toBe(400)
        const anonymous = yield* Effect.promise(() => fetch(`${intake}/v1/devices`))
        expect(anonymous.status).toBe(401)
        const nowhere = yield* Effect.promise(() =>
          fetch(`${intake}/v1/nowhere?x=1`, { headers: { authorization: `Bearer ${token}` } })
        )
        expect(nowhere.status).toBe(404)

        const isOutcome = (line: Line) => line.annotations["executionId"] === executionId
        const parsed = (): ReadonlyArray<Line> =>
          lines(running.stdout()).map((line) => JSON.parse(line) as Line)
        yield* Effect.gen(function* () {
          while (!parsed().some(isOutcome)) yield* Effect.sleep("200 millis")
        }).pipe(Effect.timeout("30 seconds"))
        expect(yield* running.terminate(60_000)).toBe(0)

        // stdout: JSON log lines only (each parses), none repeated on stderr.
        const records = parsed()
        expect(
          records.filter((line) => String(line.message).includes("tillflow worker started"))
        ).toHaveLength(1)
        expect(records.filter((line) => String(line.message).includes("built-in simulator"))).toHaveLength(1)
        expect(running.stderr()).not.toContain("built-in simulator at")

        // One outcome line: who, what, how much, how it ended; no card data.
        const outcome = records.filter(isOutcome)
        expect(outcome).toHaveLength(1)
        expect(outcome[0]?.logLevel).toBe("INFO")
        expect(outcome[0]?.annotations).toMatchObject({
          executionId,
          operation: "sale",
          terminal: serial,
          amount: "10.50",
          currency: "EUR",
          outcome: "approved"
        })
        expect(facts["maskedCardNumber"]?.length ?? 0).toBeGreaterThan(0)
        const outcomeText = JSON.stringify(outcome[0])
        expect(outcomeText).not.toContain(facts["maskedCardNumber"])
        if (facts["cardToken"] !== undefined) expect(running.stdout()).not.toContain(facts["cardToken"])

        // The refused request: INFO, method, path, status and error tag, no cause or stack.
        const refusals = records.filter((line) => Number(line.annotations["http.status"]) >= 400)
        expect(refusals.map((line) => [line.logLevel, line.message])).toEqual([
          ["INFO", "POST /v1/operations 400 InvalidRequest"],
          ["INFO", "GET /v1/devices 401 Unauthorized"],
          ["INFO", "GET /v1/nowhere 404 NotFound"]
        ])
        for (const line of refusals) expect(line).not.toHaveProperty("cause")
        expect(running.stdout()).not.toMatch(/\n\s+at /)
      }).pipe(Effect.scoped),
    300_000
  )
})
