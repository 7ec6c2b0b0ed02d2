/**
 * The Merchants page, in Chromium (Playwright) against a real worker holding a
 * key-encryption key: an admin registers a merchant, adds an API key (typed into a password
 * field, sent once on a double click, never shown again) and disables the merchant, each
 * confirmed in a dialog and sent once; an operator is not offered the page, and the server
 * refuses the list to their session (403).
 */
import * as Effect from "effect/Effect"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Operators from "../../src/Operators.js"
import * as Chromium from "../../src/testing/Chromium.js"
import * as ActionsScenario from "./ActionsScenario.js"
import { client, inCi, requireBrowser } from "./Scenario.js"
import * as Worker from "./Worker.js"

const secretKey = "sk_live_console_e2e_7c1b9a8d6e5f4a3b2c1d0e9f"

/** `TILLFLOW_OPERATORS`: ada an admin, ana an operator. */
const operators = async (): Promise<string> =>
  JSON.stringify([
    { name: "ada", role: "admin", secret: await Effect.runPromise(Operators.hash("ada-secret", 1000)) },
    { name: "ana", role: "operator", secret: await Effect.runPromise(Operators.hash("ana-secret", 1000)) }
  ])

interface Listed {
  readonly id: string
  readonly enabled: boolean
  readonly keys: ReadonlyArray<{ readonly keyId: string; readonly state: string }>
}

describe.skipIf(!Chromium.available() && !inCi)("the Merchants page (Chromium)", () => {
  let worker: Worker.Worker
  let browser: Chromium.Launched
  let context: BrowserContext
  let page: Page

  const listed = async (): Promise<ReadonlyArray<Listed>> =>
    (await (await client(worker).api("GET", `${worker.base}/v1/merchants`)).json()) as ReadonlyArray<Listed>

  beforeAll(async () => {
    requireBrowser("Chromium", Chromium.available(), Chromium.executablePath, "chromium")
    worker = await Worker.start({
      TILLFLOW_OPERATORS: await operators(),
      TILLFLOW_KEK: `kek-e2e:${btoa(String.fromCharCode(...new Uint8Array(32).fill(3)))}`
    })
    browser = await Chromium.launch()
    context = browser.context
    page = context.pages()[0] ?? (await context.newPage())
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
    await worker?.stop()
  }, 60_000)

  it("an admin registers a merchant, adds a key sent once and never shown again, and disables it", async () => {
    await ActionsScenario.login(page, worker, "ada", "ada-secret")
    await page.click("nav a[data-page=merchants]")
    await page.locator("#no-merchants").waitFor()

    await page.click("#merchant-register-open")
    await page.fill("#merchant-id", "m-e2e")
    await page.fill("#merchant-name", "Café Console")
    await page.fill("#merchant-mcc", "5812")
    await page.dblclick("#merchant-register-send")
    const row = page.locator("tr[data-merchant=m-e2e]")
    await row.waitFor()
    expect(await page.locator("#merchants-notice").textContent()).toBe("m-e2e registered.")
    expect(await row.textContent()).toContain("Café Console")

    await row.locator("button[data-action=add-key]").click()
    expect(await page.getAttribute("#merchant-key", "type")).toBe("password")
    await page.fill("#merchant-key", secretKey)
    await page.dblclick("#merchant-key-send")
    await row.locator("li[data-key]").waitFor()
    const [merchant] = await listed()
    expect(merchant?.keys).toEqual([expect.objectContaining({ state: "active" })])
    expect(await page.locator("#merchant-key").count()).toBe(0)
    expect(await page.content()).not.toContain(secretKey)

    await row.locator("button[data-action=disable]").click()
    expect(await page.locator("#merchant-state-question").textContent()).toContain(
      "Disable Café Console (m-e2e)?"
    )
    await page.dblclick("#merchant-state-send")
    await expect.poll(() => row.locator(".merchant-state").textContent()).toBe("disabled")
    expect((await listed()).map((m) => [m.id, m.enabled])).toEqual([["m-e2e", false]])
    expect(worker.stderr()).not.toContain(secretKey)
  }, 120_000)

  it("an operator is not offered the page, and the server refuses them the list (403)", async () => {
    await context.clearCookies()
    await ActionsScenario.login(page, worker, "ana", "ana-secret")
    expect(await page.locator("nav a[data-page=merchants]").count()).toBe(0)
    await page.goto(`${worker.base}/console#/merchants`)
    await page.locator("main h1").waitFor()
    expect(await page.locator("main h1").textContent()).not.toBe("Merchants")
    const status = await page.evaluate(async () => (await fetch("/v1/merchants")).status)
    expect(status).toBe(403)
  }, 60_000)
})
