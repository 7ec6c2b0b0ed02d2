/**
 * An operator's actions on a pre-authorization in the console, in Chromium against a real
 * worker on the built-in simulator: ana increases a hold of 10.00 EUR by 2.00 and captures
 * 12.00 from its page, and releases another hold — each confirmed in its dialog with the
 * amount and currency (the release: in full), recorded with her name, and followed by the
 * money fact in the transaction's timeline; a capture of a released hold is refused with
 * the rule's message.
 */
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Chromium from "../../src/testing/Chromium.js"
import * as ActionsScenario from "./ActionsScenario.js"
import { inCi, requireBrowser } from "./Scenario.js"
import * as Worker from "./Worker.js"

describe.skipIf(!Chromium.available() && !inCi)("operator actions on a pre-authorization (Chromium)", () => {
  let worker: Worker.Worker
  let browser: Chromium.Launched
  let context: BrowserContext
  let page: Page

  /** Opens the action's dialog on the execution's page, fills it, confirms; the confirmation line. */
  const act = async (
    executionId: string,
    action: "capture" | "increase" | "release",
    amount: string | undefined,
    reason: string
  ) => {
    await page.goto(`${worker.base}/console#/executions/${executionId}`)
    await page.locator(`#actions button[data-action=${action}]`).click()
    await page.locator("#action-dialog").waitFor()
    if (amount !== undefined) await page.fill("#action-amount", amount)
    await page.fill("#action-reason", reason)
    const confirmation = await page.locator("#action-confirm").textContent()
    await page.click("#action-send")
    return confirmation
  }

  const timelineOf = (guid: string) => async () => (await ActionsScenario.timeline(worker, guid)).join("\n")

  beforeAll(async () => {
    requireBrowser("Chromium", Chromium.available(), Chromium.executablePath, "chromium")
    worker = await Worker.start({
      TILLFLOW_CALLBACK_FALLBACK: "1 second",
      TILLFLOW_OPERATORS: await ActionsScenario.operators()
    })
    browser = await Chromium.launch()
    context = browser.context
    page = context.pages()[0] ?? (await context.newPage())
    await ActionsScenario.login(page, worker, "ana", "ana-secret")
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
    await worker?.stop()
  }, 60_000)

  it("ana increases a hold by 2.00 and captures 12.00: each confirmed with its amount, recorded with her name", async () => {
    const held = await ActionsScenario.preAuthorization(worker)
    expect(await act(held.executionId, "increase", "2.00", "the guest ordered breakfast")).toBe(
      `Increase the hold 2.00 EUR on transaction ${held.guid}?`
    )
    await page.locator("#action-notice a").waitFor()
    await expect
      .poll(timelineOf(held.guid), { timeout: 30_000 })
      .toMatch(
        /increase of 2\.00 EUR asked by operator ana: the guest ordered breakfast[\s\S]*hold increased by 2\.00 EUR to 12\.00 EUR/
      )

    expect(await act(held.executionId, "capture", "12.00", "check-out")).toBe(
      `Capture 12.00 EUR on transaction ${held.guid}?`
    )
    await page.locator("#action-notice a").waitFor()
    await expect
      .poll(timelineOf(held.guid), { timeout: 30_000 })
      .toMatch(
        /capture of 12\.00 EUR asked by operator ana: check-out[\s\S]*captured 12\.00 EUR: status CAPTURED/
      )
  }, 120_000)

  it("ana releases another hold in full; a capture of it afterwards is refused with the rule", async () => {
    const held = await ActionsScenario.preAuthorization(worker, "3000")
    expect(await act(held.executionId, "release", undefined, "the booking was cancelled")).toBe(
      `Release the hold transaction ${held.guid} in full?`
    )
    await page.locator("#action-notice a").waitFor()
    await expect
      .poll(timelineOf(held.guid), { timeout: 30_000 })
      .toMatch(
        /release asked by operator ana: the booking was cancelled[\s\S]*hold of 30\.00 EUR released: status RELEASED/
      )

    await act(held.executionId, "capture", "30.00", "too late")
    await expect
      .poll(() => page.locator("#action-error").textContent(), { timeout: 30_000 })
      .toContain("Refused by rule")
    await page.getByRole("button", { name: "Cancel" }).click()
  }, 120_000)
})
