/**
 * An operator's actions in the console, in Chromium (Playwright) against a real worker on
 * the built-in simulator with named operators: ana (operator) refunds part of a sale from
 * its page — the dialog shows the amount and currency before it is sent, a double click
 * sends it once — and sees the refund in the timeline with her name and in the ledger; a
 * refund above the sale is refused in the dialog with the rule's message; vic (viewer) is
 * offered no action and refused by the server (403).
 */
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Chromium from "../../src/testing/Chromium.js"
import * as ActionsScenario from "./ActionsScenario.js"
import { inCi, requireBrowser } from "./Scenario.js"
import * as Worker from "./Worker.js"

describe.skipIf(!Chromium.available() && !inCi)("operator actions in the console (Chromium)", () => {
  let worker: Worker.Worker
  let browser: Chromium.Launched
  let context: BrowserContext
  let page: Page
  let sale: { executionId: string; guid: string }

  const login = async (name: string, secret: string) => {
    await context.clearCookies()
    await ActionsScenario.login(page, worker, name, secret)
  }

  beforeAll(async () => {
    requireBrowser("Chromium", Chromium.available(), Chromium.executablePath, "chromium")
    worker = await Worker.start({
      TILLFLOW_CALLBACK_FALLBACK: "1 second",
      TILLFLOW_OPERATORS: await ActionsScenario.operators()
    })
    browser = await Chromium.launch()
    context = browser.context
    page = context.pages()[0] ?? (await context.newPage())
    sale = await ActionsScenario.sale(worker)
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
    await worker?.stop()
  }, 60_000)

  it("an operator refunds part of the sale from its page: confirmed with amount and currency, sent once on a double click", async () => {
    await login("ana", "ana-secret")
    await page.goto(`${worker.base}/console#/executions/${sale.executionId}`)
    await page.locator("#actions button[data-action=refund]").click()
    await page.locator("#action-dialog").waitFor()
    expect(await page.inputValue("#action-amount")).toBe("10.50")
    await page.fill("#action-amount", "4.00")
    await page.fill("#action-reason", "one item returned")
    expect(await page.locator("#action-confirm").textContent()).toBe(
      `Refund 4.00 EUR on transaction ${sale.guid}?`
    )
    expect(await page.locator("#action-send").textContent()).toBe("Confirm: 4.00 EUR")
    await page.dblclick("#action-send")
    await page.locator("#action-notice a").waitFor()
    await expect
      .poll(
        async () =>
          (await ActionsScenario.timeline(worker, sale.guid)).filter((l) =>
            l.includes("refund of 4.00 EUR asked by operator ana")
          ).length
      )
      .toBe(1)
    // The refund itself, made on the terminal, shows in the sale's timeline on its page, with ana's name.
    await expect
      .poll(() => page.locator("#timeline").textContent(), { timeout: 30_000 })
      .toContain("refund of 4.00 EUR asked by operator ana: one item returned")
    expect(await ActionsScenario.refundExecutions(worker)).toBe(1)
  }, 120_000)

  it("the refund is in the ledger", async () => {
    await expect
      .poll(() => ActionsScenario.refundEntries(worker), { timeout: 30_000 })
      .toEqual([expect.stringContaining("4.00")])
    await page.goto(`${worker.base}/console#/ledger`)
    // The day's row: one sale of 10.50, one refund of 4.00, 6.50 net.
    await expect.poll(() => page.locator("main").textContent(), { timeout: 30_000 }).toContain("1 · 4.00 EUR")
    expect(await page.locator("main").textContent()).toContain("6.50 EUR")
  }, 60_000)

  it("a refund above what is left is refused in the dialog with the rule's message", async () => {
    await page.goto(`${worker.base}/console#/executions/${sale.executionId}`)
    await page.locator("#actions button[data-action=refund]").click()
    await page.fill("#action-amount", "10.50")
    await page.fill("#action-reason", "everything")
    await page.click("#action-send")
    await expect
      .poll(() => page.locator("#action-error").textContent())
      .toContain("Refused by rule refund-not-above-sale")
    await page.getByRole("button", { name: "Cancel" }).click()
  }, 60_000)

  it("a viewer is offered no action and the server refuses one (403)", async () => {
    await login("vic", "vic-secret")
    await page.goto(`${worker.base}/console#/executions/${sale.executionId}`)
    await expect
      .poll(() => page.locator("#actions").textContent())
      .toContain("a viewer reads, it does not act")
    expect(await page.locator("#actions button").count()).toBe(0)
    const status = await page.evaluate(async (guid) => {
      const r = await fetch(`/v1/transactions/${guid}/actions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ action: "refund", amount: "1.00", currency: "EUR", reason: "viewer" })
      })
      return r.status
    }, sale.guid)
    expect(status).toBe(403)
  }, 60_000)
})
