/**
 * What the Merchants page's tests share, in Chromium and Firefox: a worker with a
 * key-encryption key and two operators (ada an admin, ana an operator), the key the admin
 * types, the merchants as the API lists them, and a merchant's acquirer and rate limit set
 * through the API.
 */
import * as Effect from "effect/Effect"
import * as Operators from "../../src/Operators.js"
import { client } from "./Scenario.js"
import * as Worker from "./Worker.js"

/** The API key the admin adds: it must appear nowhere once sent. */
export const secretKey = "sk_live_console_e2e_7c1b9a8d6e5f4a3b2c1d0e9f"

/** A merchant as the API lists it. */
export interface Listed {
  readonly id: string
  readonly enabled: boolean
  readonly keys: ReadonlyArray<{ readonly keyId: string; readonly state: string }>
}

/** A worker with `TILLFLOW_KEK` and the operators ada (admin) and ana (operator). */
export const start = async (): Promise<Worker.Worker> =>
  Worker.start({
    TILLFLOW_OPERATORS: JSON.stringify([
      { name: "ada", role: "admin", secret: await Effect.runPromise(Operators.hash("ada-secret", 1000)) },
      { name: "ana", role: "operator", secret: await Effect.runPromise(Operators.hash("ana-secret", 1000)) }
    ]),
    TILLFLOW_KEK: `kek-e2e:${btoa(String.fromCharCode(...new Uint8Array(32).fill(3)))}`
  })

/** The merchants of the worker (with the intake's token). */
export const listed = async (worker: Worker.Worker): Promise<ReadonlyArray<Listed>> =>
  (await (await client(worker).api("GET", `${worker.base}/v1/merchants`)).json()) as ReadonlyArray<Listed>

/** Sets, with the intake's token, what `merchant`'s acquirer supports and its own rate limit. */
export const configure = async (
  worker: Worker.Worker,
  merchant: string,
  acquirer: { readonly partialReversal?: boolean | null; readonly captureReversal?: boolean | null },
  rateLimit: { readonly count: number; readonly intervalMillis: number; readonly burst: number } | null
): Promise<void> => {
  const api = client(worker).api
  for (const [route, body] of [
    ["acquirer", acquirer],
    ["rate-limit", { rateLimit }]
  ] as const) {
    const reply = await api("POST", `${worker.base}/v1/merchants/${merchant}/${route}`, body)
    if (reply.status !== 200) throw new Error(`${route}: ${reply.status} ${await reply.text()}`)
  }
}
