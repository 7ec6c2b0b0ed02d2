/**
 * What the tests of an operator limited to merchants share, in Chromium and Firefox: a
 * worker serving two merchants besides its own (cafe-sol and tea-house, each with a
 * terminal and a key at the built-in simulator, registered with that key), the operators
 * lena (cafe-sol's) and max (both merchants'), and sales made for a merchant with the
 * platform's token.
 */
import * as Effect from "effect/Effect"
import { expect } from "vitest"
import * as Operators from "../../src/Operators.js"
import * as Worker from "./Worker.js"

/** The merchants: id, its id at the simulator, its terminal. */
export const merchants = [
  { id: "cafe-sol", simId: "SIM-CAFE", serial: "CAFE-1" },
  { id: "tea-house", simId: "SIM-TEA", serial: "TEA-1" }
] as const

/** The worker pages that span every merchant: never offered to a limited operator. */
export const platformPages = ["merchants"] as const

/** The pages a limited operator is offered, each answered scoped to its merchant by the worker. */
export const merchantPages = ["alerts", "terminals", "executions", "ledger"] as const

/**
 * The routes a limited operator's console must never call (refused to it: 403). The live
 * feed, the alerts and the terminals' monitor are not: they are answered to it scoped to
 * its merchant.
 */
export const platformRoutes = ["/v1/audit/verify", "/v1/audit/rebuild", "/v1/merchants"]

/** A worker with `TILLFLOW_KEK` and the operators lena (cafe-sol) and max (cafe-sol, tea-house). */
export const start = async (): Promise<Worker.Worker> =>
  Worker.start({
    TILLFLOW_OPERATORS: JSON.stringify([
      {
        name: "lena",
        role: "operator",
        merchants: ["cafe-sol"],
        secret: await Effect.runPromise(Operators.hash("lena-secret", 1000))
      },
      {
        name: "max",
        role: "operator",
        merchants: ["cafe-sol", "tea-house"],
        secret: await Effect.runPromise(Operators.hash("max-secret", 1000))
      }
    ]),
    TILLFLOW_KEK: `kek-e2e:${btoa(String.fromCharCode(...new Uint8Array(32).fill(5)))}`
  })

const send = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
  const reply = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })
  const text = await reply.text()
  expect(reply.ok, `POST ${url}: ${reply.status} ${text}`).toBe(true)
  return JSON.parse(text) as Record<string, unknown>
}

/** Each merchant at the simulator (a terminal, a key) and registered at the worker with that key. */
export const setUp = async (worker: Worker.Worker): Promise<void> => {
  const platform = { authorization: `Bearer ${worker.token}` }
  for (const m of merchants) {
    const created = await send(`${worker.admin}/merchants`, { id: m.simId, name: m.id, mcc: "5812" })
    await send(`${worker.admin}/merchants/${m.simId}/terminals`, {
      serial_number: m.serial,
      terminal_type: "ANDROID"
    })
    await send(`${worker.base}/v1/merchants`, { id: m.id, name: m.id, mcc: "5812" }, platform)
    await send(
      `${worker.base}/v1/merchants/${m.id}/keys`,
      { kind: "merchant", key: String(created["apiKey"]) },
      platform
    )
  }
}

let amount = 1_200

/** An approved sale on the merchant's terminal, made with the platform's token: its execution id. */
export const sale = async (worker: Worker.Worker, merchant: (typeof merchants)[number]): Promise<string> => {
  const done = await send(
    `${worker.base}/v1/operations`,
    {
      idempotencyKey: `scoped-${merchant.id}-${globalThis.crypto.randomUUID()}`,
      waitSeconds: 60,
      request: {
        operation: "sale",
        serial_number: merchant.serial,
        amount: String(amount++),
        currency: "EUR"
      }
    },
    { authorization: `Bearer ${worker.token}`, "tillflow-merchant": merchant.id }
  )
  expect((done["report"] as { verdict?: string } | undefined)?.verdict).toBe("approved")
  return String(done["executionId"])
}

/** The serial numbers of a merchant's executions of `operation`, as the platform lists them for it. */
export const terminalsOf = async (
  worker: Worker.Worker,
  merchant: (typeof merchants)[number],
  operation: string
): Promise<ReadonlyArray<string>> => {
  const reply = await fetch(`${worker.base}/v1/monitor/executions?operation=${operation}`, {
    headers: { authorization: `Bearer ${worker.token}`, "tillflow-merchant": merchant.id }
  })
  expect(reply.status).toBe(200)
  const body = (await reply.json()) as {
    readonly executions: ReadonlyArray<{ readonly attributes: Record<string, string> }>
  }
  return body.executions.map((e) => e.attributes["serialNumber"] ?? "")
}
