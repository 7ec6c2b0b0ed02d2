/**
 * A worker never answers a caller wrongly while it starts or stops: requests sent from the
 * first moment its port accepts a connection until it has exited get a 2xx, a 4xx for bad
 * input (with a JSON error), or a 503 with a JSON reason and `Retry-After` — never a 404, a
 * 500 or an empty body. A cashier told "not found" takes the payment again under a new key;
 * one told 503 retries the same key, which is safe.
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

const main = "apps/worker/src/main.ts"
const token = "first-byte-test-token"

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

/** One answer as a caller sees it; `undefined` when no connection was made or it was cut. */
interface Answer {
  readonly label: string
  readonly status: number
  readonly retryAfter: string | null
  readonly text: string
  readonly json: unknown
}

const send = async (
  base: string,
  label: string,
  method: string,
  path: string,
  body?: unknown
): Promise<Answer | undefined> => {
  try {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000)
    })
    const text = await response.text()
    let json: unknown = undefined
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { label, status: response.status, retryAfter: response.headers.get("retry-after"), text, json }
  } catch {
    // Refused, reset or cut: no answer at all, which a caller retries like any network error.
    return undefined
  }
}

/** Why an answer misleads a caller, or `undefined` when it does not. */
const misleading = (answer: Answer): string | undefined => {
  const hasMessage =
    typeof answer.json === "object" &&
    answer.json !== null &&
    typeof (answer.json as { message?: unknown }).message === "string"
  if (answer.status >= 200 && answer.status < 300) return undefined
  if (answer.status === 503) {
    if (!hasMessage) return "503 without a JSON reason"
    if (answer.retryAfter === null) return "503 without Retry-After"
    return undefined
  }
  if (answer.status === 404) return "404"
  if (answer.status >= 400 && answer.status < 500)
    return hasMessage ? undefined : `${answer.status} without a JSON error`
  return `${answer.status}`
}

describe("a worker's port from its first byte to its exit", () => {
  it.live(
    "answers every operation with a 2xx, a 4xx for bad input, or a 503 JSON with Retry-After, while starting, running and stopping",
    () =>
      Effect.gen(function* () {
        const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-first-byte-"))
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => Fs.rmSync(folder, { recursive: true, force: true }))
        )
        const port = yield* freePort
        const base = `http://127.0.0.1:${port}`
        // On PostgreSQL when there is one (a fresh database), else on the embedded store.
        const database = yield* TestDatabase.TestDatabase
        const store =
          database.kind === "postgres" && Option.isSome(database.url)
            ? { DATABASE_URL: Redacted.value(database.url.value) }
            : { TILLFLOW_DATA_DIR: Path.join(folder, "data") }
        const env = Processes.cleanEnv({
          ...store,
          TILLFLOW_INTAKE_PORT: String(port),
          TILLFLOW_INTAKE_TOKEN: token,
          // Terminals at their real pace: sales are still running when SIGTERM comes, so the
          // worker stops over seconds (letting them finish) while its port still answers.
          TILLFLOW_LOG_LEVEL: "Warning"
        })
        const running = yield* Processes.start(main, [], env)

        const answers: Array<Answer> = []
        let serial = "0000000000"
        let ready = false
        let exited = false
        running.child.on("exit", () => {
          exited = true
        })
        // Waiting for the banner in the background: the terminals are known from then on.
        void Effect.runPromise(
          Effect.either(running.waitFor(/ {2}terminals {3}(\S+) /, 120_000, "stderr"))
        ).then((found) => {
          if (found._tag === "Right" && found.right[1] !== undefined) serial = found.right[1]
        })
        let heldSerial: string | undefined
        void Effect.runPromise(
          Effect.either(running.waitFor(/ {2}terminals {3}\S+ \([^)]*\), (\S+) /, 120_000, "stderr"))
        ).then((found) => {
          if (found._tag === "Right" && found.right[1] !== undefined) heldSerial = found.right[1]
        })
        let admin: string | undefined
        void Effect.runPromise(Effect.either(running.waitFor(/; admin (\S+)\)/, 120_000, "stderr"))).then(
          (found) => {
            if (found._tag === "Right" && found.right[1] !== undefined) admin = found.right[1]
          }
        )

        let n = 0
        const round = async () => {
          n++
          const sale = {
            idempotencyKey: `first-byte-${n}`,
            request: { operation: "sale", serial_number: serial, amount: "1050", currency: "EUR" },
            waitSeconds: n % 3 === 0 ? 2 : 0
          }
          const batch = await Promise.all([
            send(base, "sale", "POST", "/v1/operations", sale),
            send(base, "bad sale", "POST", "/v1/operations", {
              ...sale,
              request: { ...sale.request, amount: "-5" }
            }),
            send(base, "devices", "GET", "/v1/devices"),
            send(base, "executions", "GET", "/v1/executions?limit=5"),
            send(base, "ready", "GET", "/ready")
          ])
          for (const answer of batch) if (answer !== undefined) answers.push(answer)
          const readyAnswer = batch[4]
          if (readyAnswer?.status === 200) ready = true
        }

        // From before the port is open until the worker is ready and has served a while.
        const started = Date.now()
        let readyRounds = 0
        while (readyRounds < 20) {
          if (Date.now() - started > 150_000) throw new Error("the worker was not ready within 150 s")
          if (exited) throw new Error(`the worker exited while starting:\n${running.stderr()}`)
          yield* Effect.promise(round)
          if (ready) readyRounds++
        }
        // A sale running across the stop, on a terminal of its own: the card is presented 6 s
        // after it starts and its result is polled (a short poll waits in memory, so the
        // execution stays running, where one waiting for a callback would be suspended), so the
        // stopping worker lets it finish (within TILLFLOW_SHUTDOWN_TIMEOUT) while its port
        // answers 503 "stopping": a window of seconds, whatever else ran.
        if (admin === undefined) throw new Error("the banner named no simulator admin URL")
        if (heldSerial === undefined) throw new Error("the banner named one terminal; the test needs two")
        const adminUrl = admin
        const slow = yield* Effect.promise(() =>
          fetch(`${adminUrl}/timings`, {
            method: "PUT",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ WaitingForCard: 6_000 })
          })
        )
        expect(slow.status).toBe(200)
        const held = yield* Effect.promise(() =>
          send(base, "sale", "POST", "/v1/operations", {
            idempotencyKey: "first-byte-held",
            request: { operation: "sale", serial_number: heldSerial, amount: "1050", currency: "EUR" },
            delivery: "polling",
            waitSeconds: 1
          })
        )
        expect(held?.status).toBe(200)
        expect(["running"]).toContain((held?.json as { readonly status?: string } | undefined)?.status)
        const beforeStop = answers.length
        // Stopping: SIGTERM while requests keep coming, until the process is gone.
        running.child.kill("SIGTERM")
        // Beside the rounds (a round waits for its slowest answer, a sale's), a quick probe of
        // /ready after another, so a short stopping window is seen too: a worker whose
        // executions all ended stops in well under a round.
        const probe = async () => {
          while (!exited) {
            const answer = await send(base, "ready", "GET", "/ready")
            if (answer !== undefined) answers.push(answer)
            await new Promise((resolve) => setTimeout(resolve, 25))
          }
        }
        const rounds = async () => {
          while (!exited) await round()
        }
        yield* Effect.promise(() => Promise.all([probe(), rounds()]))

        const bad = answers.flatMap((answer) => {
          const why = misleading(answer)
          return why === undefined ? [] : [`${answer.label}: ${why} ${answer.text.slice(0, 200)}`]
        })
        expect(bad).toEqual([])
        // It served sales, and while stopping it said so (503 with a reason) until it was gone.
        expect(answers.slice(0, beforeStop).some((a) => a.label === "sale" && a.status === 200)).toBe(true)
        const stoppingAnswers = answers.slice(beforeStop).filter((a) => a.status === 503)
        expect(stoppingAnswers.length).toBeGreaterThan(0)
        expect(
          stoppingAnswers.some((a) => (a.json as { readonly message: string }).message.includes("stopping"))
        ).toBe(true)
      }).pipe(Effect.scoped, Effect.provide(Layer.fresh(TestDatabase.layer))),
    300_000
  )
})
