/**
 * The store unreachable, as an operator meets it: a worker on PostgreSQL through a TCP
 * proxy that the test cuts. Every route that needs the store answers 503 with a JSON
 * reason and `Retry-After` (never a 500 or an empty body), `/ready` says the store is not
 * ready, and once the database is reachable again the worker serves sales without a
 * restart. PostgreSQL only (DATABASE_URL), as in CI.
 */
import { describe, expect, it } from "@effect/vitest"
import { TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Processes from "./support/Processes.js"
import * as TcpProxy from "./support/TcpProxy.js"

const main = "apps/worker/src/main.ts"
const token = "store-outage-test-token"

const postgres =
  (process.env["DATABASE_URL"] ?? "").trim() !== "" || process.env["TILLFLOW_REQUIRE_POSTGRES"] === "1"

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

const call = (base: string, method: string, path: string, body?: unknown) =>
  Effect.promise(async () => {
    const started = Date.now()
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    let json: unknown = undefined
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return {
      path,
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      json: json as { readonly _tag?: string; readonly message?: string } | undefined,
      text,
      millis: Date.now() - started
    }
  })

describe("the store unreachable", () => {
  it.live.skipIf(!postgres)(
    "every route that needs the store answers 503 JSON with Retry-After, and sales go on once it is back",
    () =>
      Effect.gen(function* () {
        const database = yield* TestDatabase.TestDatabase
        if (database.kind !== "postgres" || Option.isNone(database.url)) {
          return yield* Effect.dieMessage("this test needs PostgreSQL: set DATABASE_URL")
        }
        const url = new URL(Redacted.value(database.url.value))
        const proxy = yield* TcpProxy.make({ host: url.hostname, port: Number(url.port || "5432") })
        url.hostname = "127.0.0.1"
        url.port = String(proxy.port)

        const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-outage-"))
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => Fs.rmSync(folder, { recursive: true, force: true }))
        )
        const port = yield* freePort
        const base = `http://127.0.0.1:${port}`
        const running = yield* Processes.start(
          main,
          [],
          Processes.cleanEnv({
            DATABASE_URL: url.toString(),
            TILLFLOW_INTAKE_PORT: String(port),
            TILLFLOW_INTAKE_TOKEN: token,
            TILLFLOW_SIMULATOR_FAST: "true",
            TILLFLOW_LOG_LEVEL: "Warning"
          })
        )
        const [, serial] = yield* running.waitFor(/ {2}terminals {3}(\S+) /, 120_000, "stderr")
        const sale = (key: string) => ({
          idempotencyKey: key,
          request: { operation: "sale", serial_number: serial, amount: "1050", currency: "EUR" },
          waitSeconds: 30
        })
        const first = yield* call(base, "POST", "/v1/operations", sale("outage-1"))
        expect(first.status).toBe(200)
        const executionId = (first.json as { executionId: string }).executionId

        yield* proxy.cut
        const routes: ReadonlyArray<readonly [string, string, unknown?]> = [
          ["POST", "/v1/operations", sale("outage-2")],
          [
            "POST",
            "/v1/lifecycle/Reversal.Reverse",
            { payload: { requestId: "rev-1", originalGuid: "01236fc0-8192-11eb-9aca-ad4b0e95f241" } }
          ],
          ["GET", "/v1/executions"],
          ["GET", `/v1/executions/${executionId}`],
          ["GET", `/v1/executions/${executionId}/history`],
          ["GET", "/v1/events"],
          ["GET", "/v1/audit/verify"],
          ["GET", "/v1/audit/ledger"],
          ["GET", "/v1/audit/entries"],
          ["GET", "/v1/audit/rebuild"],
          ["GET", `/v1/audit/timeline/${executionId}`],
          ["GET", "/ready"]
        ]
        const answers = yield* Effect.forEach(
          routes,
          ([method, path, body]) => call(base, method, path, body),
          {
            concurrency: 4
          }
        )
        expect(
          answers.map((a) => ({
            path: a.path,
            status: a.status,
            json: typeof a.json?.message === "string" || typeof a.json?._tag === "string",
            retryAfter: a.retryAfter !== null
          }))
        ).toEqual(routes.map(([, path]) => ({ path, status: 503, json: true, retryAfter: true })))
        // The device list needs no store: it still answers.
        expect((yield* call(base, "GET", "/v1/devices")).status).toBe(200)

        yield* proxy.restore
        // Back without a restart: a new sale (the pool reconnects) within a minute.
        const again = yield* Effect.gen(function* () {
          while (true) {
            const answer = yield* call(base, "POST", "/v1/operations", sale("outage-3"))
            if (answer.status !== 503) return answer
            yield* Effect.sleep("1 second")
          }
        }).pipe(Effect.timeout("60 seconds"))
        expect(again.status).toBe(200)
        expect((again.json as { status?: string }).status).toBe("succeeded")
        expect(yield* running.terminate(60_000)).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(Layer.fresh(TestDatabase.layer))),
    300_000
  )
})
