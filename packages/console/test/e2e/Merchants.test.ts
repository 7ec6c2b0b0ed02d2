/**
 * The Merchants page, in Chromium (Playwright) against a real worker holding a
 * key-encryption key: an admin registers a merchant, adds an API key (typed into a password
 * field, sent once on a double click, never shown again) and disables the merchant, each
 * confirmed in a dialog and sent once, then retires the key; the page shows the merchant's
 * acquirer capabilities and rate limit, the deployment's until set, its own once set. An
 * operator is not offered the page, and the server refuses the list to their session (403).
 */
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Chromium from "../../src/testing/Chromium.js"
import * as ActionsScenario from "./ActionsScenario.js"
import { configure, listed, secretKey, start } from "./MerchantsScenario.js"
import { inCi, requireBrowser } from "./Scenario.js"
import type * as Worker from "./Worker.js"

describe.skipIf(!Chromium.available() && !inCi)("the Merchants page (Chromium)", () => {
  let worker: Worker.Worker
  let browser: Chromium.Launched
  let context: BrowserContext
  let page: Page

  beforeAll(async () => {
    requireBrowser("Chromium", Chromium.available(), Chromium.executablePath, "chromium")
    worker = await start()
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
    // Registered without them: its acquirer's capabilities and its rate limit are the deployment's.
    expect(await row.locator(".merchant-acquirer").innerText()).toBe(
      "partial reversal: deployment's\ncapture reversal: deployment's"
    )
    expect(await row.locator(".merchant-rate-limit").textContent()).toBe("deployment's")

    await row.locator("button[data-action=add-key]").click()
    expect(await page.getAttribute("#merchant-key", "type")).toBe("password")
    await page.fill("#merchant-key", secretKey)
    await page.dblclick("#merchant-key-send")
    await row.locator("li[data-key]").waitFor()
    const [merchant] = await listed(worker)
    expect(merchant?.keys).toEqual([expect.objectContaining({ state: "active" })])
    expect(await page.locator("#merchant-key").count()).toBe(0)
    expect(await page.content()).not.toContain(secretKey)

    // Set for the merchant (the CLI's or the API's), the page shows its own after a reload.
    await configure(
      worker,
      "m-e2e",
      { partialReversal: true, captureReversal: false },
      {
        count: 20,
        intervalMillis: 1_000,
        burst: 40
      }
    )
    await page.reload()
    await row.waitFor()
    expect(await row.locator(".merchant-acquirer").innerText()).toBe(
      "partial reversal: yes\ncapture reversal: no"
    )
    expect(await row.locator(".merchant-rate-limit").textContent()).toBe("20/s (burst 40)")

    await row.locator("button[data-action=disable]").click()
    expect(await page.locator("#merchant-state-question").textContent()).toContain(
      "Disable Café Console (m-e2e)?"
    )
    await page.dblclick("#merchant-state-send")
    await expect.poll(() => row.locator(".merchant-state").textContent()).toBe("disabled")
    expect((await listed(worker)).map((m) => [m.id, m.enabled])).toEqual([["m-e2e", false]])

    // The key retired, confirmed first.
    await row.locator("button[data-action=retire]").click()
    await page.dblclick("#merchant-retire-send")
    await expect.poll(() => row.locator("li[data-key] .badge").textContent()).toBe("retired")
    expect((await listed(worker))[0]?.keys.map((k) => k.state)).toEqual(["retired"])
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
