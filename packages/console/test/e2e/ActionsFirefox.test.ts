/**
 * An operator's actions in the console, in Firefox (Puppeteer over WebDriver BiDi), as the
 * Chromium test does (`Actions.test.ts`): refund part of a sale from its page, confirmed
 * with its amount and currency, sent once on a double click, in the timeline with the
 * operator's name and in the ledger; refused with the rule's message; a viewer refused.
 */
import type { Page } from "puppeteer-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Firefox from "../../src/testing/Firefox.js"
import * as ActionsScenario from "./ActionsScenario.js"
import { client, count, inCi, requireBrowser, text } from "./Scenario.js"
import * as Worker from "./Worker.js"

describe.skipIf(!Firefox.available() && !inCi)("operator actions in the console (Firefox)", () => {
  let worker: Worker.Worker
  let browser: Firefox.Launched
  let page: Page
  let sale: { executionId: string; guid: string }

  const login = async (name: string, secret: string) => {
    await page.goto(`${worker.base}/console`)
    // Logged out first: the login page when there is no session.
    await page.evaluate(() => fetch("/console/logout", { method: "POST" }).then(() => undefined))
    await page.goto(`${worker.base}/console`)
    await page.locator("#name").fill(name)
    await page.locator("#token").fill(secret)
    await page.click("button[type=submit]")
    await page.waitForSelector("nav")
  }

  const openSale = async () => {
    await page.goto(`${worker.base}/console#/executions/${sale.executionId}`)
    await page.waitForSelector("#actions")
  }

  beforeAll(async () => {
    requireBrowser("Firefox", Firefox.available(), Firefox.executablePath, "firefox-esr")
    worker = await Worker.start({
      TILLFLOW_CALLBACK_FALLBACK: "1 second",
      TILLFLOW_OPERATORS: await ActionsScenario.operators()
    })
    browser = await Firefox.launch()
    page = browser.page
    sale = await ActionsScenario.sale(worker)
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
    await worker?.stop()
  }, 60_000)

  it("an operator refunds part of the sale from its page: confirmed with amount and currency, sent once on a double click", async () => {
    await login("ana", "ana-secret")
    await openSale()
    await page.click("#actions button[data-action=refund]")
    await page.waitForSelector("#action-dialog")
    expect(await page.evaluate('document.querySelector("#action-amount").value')).toBe("10.50")
    await page.locator("#action-amount").fill("4.00")
    await page.locator("#action-reason").fill("one item returned")
    expect(await text(page, "#action-confirm")).toBe(`Refund 4.00 EUR on transaction ${sale.guid}?`)
    expect(await text(page, "#action-send")).toBe("Confirm: 4.00 EUR")
    await page.click("#action-send", { count: 2 })
    await page.waitForSelector("#action-notice a")
    await expect
      .poll(
        async () =>
          (await ActionsScenario.timeline(worker, sale.guid)).filter((l) =>
            l.includes("refund of 4.00 EUR asked by operator ana")
          ).length
      )
      .toBe(1)
    await expect
      .poll(() => text(page, "#timeline"), { timeout: 30_000 })
      .toContain("refund of 4.00 EUR asked by operator ana: one item returned")
    expect(await ActionsScenario.refundExecutions(worker)).toBe(1)
  }, 120_000)

  it("the refund is in the ledger", async () => {
    await expect
      .poll(() => ActionsScenario.refundEntries(worker), { timeout: 30_000 })
      .toEqual([expect.stringContaining("4.00")])
    await page.goto(`${worker.base}/console#/ledger`)
    await expect.poll(() => text(page, "main"), { timeout: 30_000 }).toContain("1 · 4.00 EUR")
    expect(await text(page, "main")).toContain("6.50 EUR")
  }, 60_000)

  it("a refund above what is left is refused in the dialog with the rule's message", async () => {
    await openSale()
    await page.click("#actions button[data-action=refund]")
    await page.locator("#action-amount").fill("10.50")
    await page.locator("#action-reason").fill("everything")
    await page.click("#action-send")
    await expect.poll(() => text(page, "#action-error")).toContain("Refused by rule refund-not-above-sale")
  }, 60_000)

  it("a viewer is offered no action and the server refuses one (403)", async () => {
    await login("vic", "vic-secret")
    await openSale()
    await expect.poll(() => text(page, "#actions")).toContain("a viewer reads, it does not act")
    expect(await count(page, "#actions button")).toBe(0)
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

  it("an operator tries again a sale its terminal never received, and stops one waiting for its card, each recorded with a reason", async () => {
    await login("ana", "ana-secret")
    const { api, cardOnFirstTerminal } = client(worker)
    const serial = await cardOnFirstTerminal()
    const patch = (body: unknown) => api("PATCH", `${worker.admin}/terminals/${serial}`, body, false)
    const verdictOf = async (id: string) =>
      (
        (await (await api("GET", `${worker.base}/v1/executions/${id}`)).json()) as {
          report?: { verdict: string }
        }
      ).report?.verdict

    // Offline past its deadline: unavailable, nothing charged; tried again once it is back.
    expect((await patch({ online: false })).status).toBe(200)
    const failed = (await (
      await api("POST", `${worker.base}/v1/operations`, {
        idempotencyKey: `ff-retry-${Date.now()}`,
        deadlineSeconds: 1,
        waitSeconds: 60,
        request: { operation: "sale", serial_number: serial, amount: "1375", currency: "EUR" }
      })
    ).json()) as { executionId: string; report?: { verdict: string } }
    expect(failed.report?.verdict).toBe("unavailable")
    expect((await patch({ online: true })).status).toBe(200)
    await page.goto(`${worker.base}/console#/executions/${failed.executionId}`)
    await page.locator("#retry-open").click()
    await page.waitForSelector("#retry-dialog")
    await page.locator("#retry-reason").fill("the terminal is back online")
    await page.click("#retry-send", { count: 2 })
    await page.waitForSelector("#retry-notice a")
    const retried = (await (
      await api("GET", `${worker.base}/v1/executions?idempotencyKey=retry-${failed.executionId}`)
    ).json()) as ReadonlyArray<{ executionId: string }>
    expect(retried).toHaveLength(1)
    await expect.poll(() => verdictOf(retried[0]?.executionId ?? ""), { timeout: 60_000 }).toBe("approved")

    // Waiting a minute for its card: stopped from its page, the sale cancelled.
    expect((await patch({ timings: { WaitingForCard: 60_000 } })).status).toBe(200)
    const waiting = (await (
      await api("POST", `${worker.base}/v1/operations`, {
        idempotencyKey: `ff-stop-${Date.now()}`,
        request: { operation: "sale", serial_number: serial, amount: "1250", currency: "EUR" }
      })
    ).json()) as { executionId: string }
    await page.goto(`${worker.base}/console#/executions/${waiting.executionId}`)
    await page.locator("#stop-open").click()
    await page.waitForSelector("#stop-dialog")
    await page.locator("#stop-reason").fill("the customer walked away")
    await page.click("#stop-send")
    await page.waitForSelector("#stop-notice a")
    await expect.poll(() => verdictOf(waiting.executionId), { timeout: 60_000 }).toBe("cancelled")
    expect((await patch({ timings: { WaitingForCard: 200 } })).status).toBe(200)
    await expect
      .poll(async () => (await ActionsScenario.timeline(worker, waiting.executionId)).join("\n"), {
        timeout: 30_000
      })
      .toContain("asked by operator ana: the customer walked away")
  }, 180_000)
})
