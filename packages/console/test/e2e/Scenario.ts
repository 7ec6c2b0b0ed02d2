/**
 * What the console's end-to-end tests share, whatever the browser: the worker's HTTP API as
 * the test calls it, the checks made without a browser, the expressions evaluated in the
 * page (as text, so that they run the same in every driver and this test code needs no DOM
 * types), and the rule that CI fails rather than skips when a browser is missing.
 */
import * as path from "node:path"
import { expect } from "vitest"
import { contentSecurityPolicy } from "../../src/ConsoleHttp.js"
import * as Worker from "./Worker.js"

/**
 * Where the screenshots go: under the ignored `build/` by default, so a test run leaves the
 * tree as it found it; `npm run docs:screenshots` points `TILLFLOW_SCREENSHOTS` at
 * `docs/console` to refresh the pictures the docs show.
 */
export const shots = path.resolve(
  Worker.root,
  process.env["TILLFLOW_SCREENSHOTS"] ?? path.join("build", "console-screenshots")
)

/** Whether the tests run under CI (`CI` set and not `false`): a missing browser fails them. */
export const inCi =
  process.env["CI"] !== undefined && process.env["CI"] !== "" && process.env["CI"] !== "false"

/** The card the simulator's first terminal reads: only its mask may ever be shown. */
export const pan = "4111111111111111"
export const masked = "411111******1111"

/** Fails (under CI, where the suite is not skipped) when the browser is not installed. */
export const requireBrowser = (name: string, available: boolean, executablePath: string, pkg: string) => {
  if (!available) {
    throw new Error(
      `${name} is not installed at ${executablePath}: CI installs Debian's ${pkg} package (.ci/run)`
    )
  }
}

/** The worker's API as the test calls it: with the intake's bearer token, or without. */
export const client = (worker: Worker.Worker) => {
  const api = (method: string, url: string, body?: unknown, bearer = true) =>
    fetch(url, {
      method,
      headers: {
        ...(bearer ? { authorization: `Bearer ${worker.token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  const terminals = async (): Promise<ReadonlyArray<string>> => {
    const reply = await api("GET", `${worker.base}/v1/monitor/terminals`)
    if (reply.status !== 200) throw new Error(`terminals: ${reply.status} ${await reply.text()}`)
    return ((await reply.json()) as ReadonlyArray<{ serialNumber: string }>).map((t) => t.serialNumber)
  }
  /** Sets the card the first terminal reads to the full `pan`; returns that terminal. */
  const cardOnFirstTerminal = async (): Promise<string> => {
    const [first] = await terminals()
    expect((await api("PATCH", `${worker.admin}/terminals/${first}`, { card: { pan } }, false)).status).toBe(
      200
    )
    return first ?? ""
  }
  /**
   * A sale whose result arrives late while the status host says DECLINED for it: the
   * worker records a result mismatch, an alert.
   */
  const forceMismatch = async (idempotencyKey: string): Promise<void> => {
    expect((await api("POST", `${worker.admin}/faults/callback-outage`, { ms: 6000 }, false)).status).toBe(
      200
    )
    expect(
      (
        await api(
          "POST",
          `${worker.admin}/faults`,
          { kind: "misreport", host: "status", finStatus: "DECLINED" },
          false
        )
      ).status
    ).toBe(201)
    const started = await api("POST", `${worker.base}/v1/operations`, {
      idempotencyKey,
      delivery: "callback",
      request: { operation: "sale", serial_number: (await terminals())[0], amount: "2000", currency: "EUR" }
    })
    expect(started.status).toBe(200)
  }
  return { api, terminals, cardOnFirstTerminal, forceMismatch }
}

/**
 * Without the credential: the console answers its login page (401) under the policy, with no
 * inline script; its script, the API and the live feed answer 401; a forged cookie is no
 * session.
 */
export const refusedWithoutCredential = async (worker: Worker.Worker) => {
  const shell = await fetch(`${worker.base}/console`)
  expect(shell.status).toBe(401)
  expect(shell.headers.get("content-security-policy")).toBe(contentSecurityPolicy)
  const html = await shell.text()
  expect(html).toContain('id="login"')
  // No inline script: every script element loads a file of this origin.
  expect(html.match(/<script[^>]*>/g)?.every((tag) => / src="\/console\/assets\//.test(tag))).toBe(true)
  for (const url of [
    "/console/assets/console.js",
    "/v1/monitor/executions",
    "/v1/monitor/live",
    "/v1/executions"
  ]) {
    expect((await fetch(`${worker.base}${url}`)).status, url).toBe(401)
  }
  const forged = await fetch(`${worker.base}/v1/monitor/alerts`, {
    headers: { cookie: `tillflow_console=${"a".repeat(64)}` }
  })
  expect(forged.status).toBe(401)
}

/** A page of any driver: both Playwright's and Puppeteer's evaluate an expression given as text. */
export interface InPage {
  readonly evaluate: (expression: string) => Promise<unknown>
}

/** Marks the page's window: a reload would lose the mark. */
export const mark = (p: InPage) => p.evaluate("window.notReloaded = true")
/** Whether the page still has its mark (was not reloaded). */
export const marked = (p: InPage) => p.evaluate("window.notReloaded === true")
/** The text of the focused element. */
export const focused = (p: InPage) =>
  p.evaluate("document.activeElement && document.activeElement.textContent")
/** The id of the focused element. */
export const focusedId = (p: InPage) => p.evaluate("document.activeElement && document.activeElement.id")
/** The text of the first element matching `selector`, or null. */
export const text = (p: InPage, selector: string) =>
  p.evaluate(`(document.querySelector(${JSON.stringify(selector)}) || {}).textContent ?? null`)
/** How many elements match `selector`. */
export const count = (p: InPage, selector: string) =>
  p.evaluate(`document.querySelectorAll(${JSON.stringify(selector)}).length`)
/** `document.cookie`: empty when the session cookie is HttpOnly. */
export const documentCookie = (p: InPage) => p.evaluate("document.cookie")
