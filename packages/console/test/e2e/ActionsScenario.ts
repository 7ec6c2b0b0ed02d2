/**
 * What the action tests share, in Chromium and Firefox: the worker's operators (ana an
 * operator, vic a viewer) and an approved sale of 10.50 EUR on the simulator, with its guid.
 */
import * as Effect from "effect/Effect"
import type { Page } from "playwright-core"
import { expect } from "vitest"
import * as Operators from "../../src/Operators.js"
import { client } from "./Scenario.js"
import type * as Worker from "./Worker.js"

/** `TILLFLOW_OPERATORS` of the worker (secrets hashed with few iterations: a test). */
export const operators = async (): Promise<string> =>
  JSON.stringify([
    { name: "ana", role: "operator", secret: await Effect.runPromise(Operators.hash("ana-secret", 1000)) },
    { name: "vic", role: "viewer", secret: await Effect.runPromise(Operators.hash("vic-secret", 1000)) }
  ])

/** An approved sale of 10.50 EUR on the first terminal: its execution and its guid. */
export const sale = async (worker: Worker.Worker): Promise<{ executionId: string; guid: string }> => {
  const { api, cardOnFirstTerminal } = client(worker)
  const serial = await cardOnFirstTerminal()
  const reply = await api("POST", `${worker.base}/v1/operations`, {
    idempotencyKey: `actions-sale-${Date.now()}`,
    request: { operation: "sale", serial_number: serial, amount: "1050", currency: "EUR" },
    waitSeconds: 60
  })
  const view = (await reply.json()) as { executionId: string; report?: { verdict: string }; result?: unknown }
  expect(view.report?.verdict).toBe("approved")
  const guid = (view.result as { value: { facts: { efttransactionID: string } } }).value.facts
    .efttransactionID
  return { executionId: view.executionId, guid }
}

/**
 * The worker's settings of the resolve tests: a 2-second reconciliation budget leaves a
 * reversal in doubt; a 5-second reconciliation leaves a terminal sale unresolved.
 */
export const inDoubtSettings = {
  TILLFLOW_CALLBACK_FALLBACK: "1 second",
  TILLFLOW_TERMINAL_LESS_BUDGET: "2 seconds",
  TILLFLOW_RECONCILE_TIMEOUT: "5 seconds"
}

/**
 * A terminal sale of `minor` EUR left unresolved (the worker started with
 * {@link inDoubtSettings}): the simulator charges it but cuts the connection before
 * answering, and its status endpoint answers 503 until reconciliation runs out of time. Its
 * execution, and the guid the gateway gave it (as an operator would read it off the
 * acquirer's report).
 */
export const terminalSaleUnresolved = async (
  worker: Worker.Worker,
  minor: number
): Promise<{ executionId: string; guid: string }> => {
  const { api, cardOnFirstTerminal } = client(worker)
  const serial = await cardOnFirstTerminal()
  const fault = async (body: Record<string, unknown>) =>
    expect((await api("POST", `${worker.admin}/faults`, body, false)).status).toBe(201)
  await fault({
    kind: "drop-response",
    method: "POST",
    path: "/transactions",
    operation: "sale",
    host: "main"
  })
  await fault({ kind: "error-before", host: "status", times: 0 })
  try {
    const reply = await api("POST", `${worker.base}/v1/operations`, {
      idempotencyKey: `unresolved-sale-${Date.now()}`,
      // Polled: no callback brings the result the cut connection lost.
      delivery: "polling",
      request: { operation: "sale", serial_number: serial, amount: String(minor), currency: "EUR" },
      waitSeconds: 90
    })
    const view = (await reply.json()) as {
      executionId: string
      attributes: Record<string, string>
      report?: { verdict: string }
    }
    expect(view.report?.verdict).toBe("unresolved")
    const gateway = (await (
      await api("GET", `${worker.admin}/transactions`, undefined, false)
    ).json()) as ReadonlyArray<{ efttransactionID: string; transactionReference: string }>
    const charged = gateway.find((t) => t.transactionReference === view.attributes["transactionReference"])
    expect(charged, JSON.stringify(view.attributes)).toBeDefined()
    return { executionId: view.executionId, guid: charged?.efttransactionID ?? "" }
  } finally {
    await api("DELETE", `${worker.admin}/faults`, undefined, false)
  }
}

/**
 * A terminal-less reversal of `guid` left in doubt (its first request answered 503 without
 * being applied, the status endpoint unable to tell within the budget): its execution id.
 */
export const reversalInDoubt = async (
  worker: Worker.Worker,
  guid: string,
  requestId: string
): Promise<string> => {
  const { api } = client(worker)
  expect(
    (
      await api(
        "POST",
        `${worker.admin}/faults`,
        { kind: "error-before", method: "POST", host: "main", times: 1 },
        false
      )
    ).status
  ).toBe(201)
  const started = await api("POST", `${worker.base}/v1/lifecycle/Reversal.Reverse`, {
    payload: { requestId, originalGuid: guid },
    waitSeconds: 60
  })
  const view = (await started.json()) as { executionId: string; report?: { verdict: string } }
  expect(view.report?.verdict).toBe("unresolved")
  await api("DELETE", `${worker.admin}/faults`, undefined, false)
  return view.executionId
}

/** The lines of the transaction's timeline (the intake's `/v1/audit/timeline/{guid}`). */
export const timeline = async (worker: Worker.Worker, guid: string): Promise<ReadonlyArray<string>> =>
  (
    (await (await client(worker).api("GET", `${worker.base}/v1/audit/timeline/${guid}`)).json()) as {
      lines: ReadonlyArray<string>
    }
  ).lines

/** The amounts of the refund entries of the ledger. */
export const refundEntries = async (worker: Worker.Worker): Promise<ReadonlyArray<string>> =>
  (
    (await (await client(worker).api("GET", `${worker.base}/v1/audit/entries`)).json()) as {
      entries: ReadonlyArray<{ operation: string; amount: string }>
    }
  ).entries
    .filter((e) => e.operation === "refund")
    .map((e) => e.amount)

/** The refund executions the worker holds. */
export const refundExecutions = async (worker: Worker.Worker): Promise<number> =>
  (
    (await (
      await client(worker).api("GET", `${worker.base}/v1/executions?operation=refund`)
    ).json()) as ReadonlyArray<unknown>
  ).length

/** An approved pre-authorization of `amount` (minor units) EUR on the first terminal: its execution and guid. */
export const preAuthorization = async (
  worker: Worker.Worker,
  amount = "1000"
): Promise<{ executionId: string; guid: string }> => {
  const { api, cardOnFirstTerminal } = client(worker)
  const serial = await cardOnFirstTerminal()
  const reply = await api("POST", `${worker.base}/v1/operations`, {
    idempotencyKey: `actions-preauth-${Date.now()}-${Math.random()}`,
    request: { operation: "preAuthorization", serial_number: serial, amount, currency: "EUR" },
    waitSeconds: 60
  })
  const view = (await reply.json()) as { executionId: string; report?: { verdict: string }; result?: unknown }
  expect(view.report?.verdict).toBe("approved")
  const guid = (view.result as { value: { facts: { efttransactionID: string } } }).value.facts
    .efttransactionID
  return { executionId: view.executionId, guid }
}

/** Logs in to the console as the operator `name` (Chromium, through Playwright). */
export const login = async (
  page: Page,
  worker: Worker.Worker,
  name: string,
  secret: string
): Promise<void> => {
  await page.goto(`${worker.base}/console`)
  await page.fill("#name", name)
  await page.fill("#token", secret)
  await page.click("button[type=submit]")
  await page.locator("nav[aria-label=Console]").waitFor()
}
