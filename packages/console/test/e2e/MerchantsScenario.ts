/**
 * What the Merchants page's tests share, in Chromium and Firefox: a worker with a
 * key-encryption key and two operators (ada an admin, ana an operator), the key the admin
 * types, and the merchants as the API lists them.
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
