/**
 * An operator resolves a request left in doubt from the console, in Firefox (Puppeteer over
 * WebDriver BiDi), as the Chromium test does (`Resolve.test.ts`): a terminal-less reversal
 * whose first request the simulator answers 503 without applying it is left in doubt; ana
 * says from its page it was not applied, with the status endpoint's answer and a reason,
 * recorded on the sale's history in her name; a second resolution is refused with the rule.
 */
import type { Page } from "puppeteer-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Firefox from "../../src/testing/Firefox.js"
import * as ActionsScenario from "./ActionsScenario.js"
import { inCi, requireBrowser, text } from "./Scenario.js"
import * as Worker from "./Worker.js"

describe.skipIf(!Firefox.available() && !inCi)(
  "resolving a request in doubt in the console (Firefox)",
  () => {
    let worker: Worker.Worker
    let browser: Firefox.Launched
    let page: Page
    let sale: { executionId: string; guid: string }
    let reversal: string

    beforeAll(async () => {
      requireBrowser("Firefox", Firefox.available(), Firefox.executablePath, "firefox-esr")
      worker = await Worker.start({
        ...ActionsScenario.inDoubtSettings,
        TILLFLOW_OPERATORS: await ActionsScenario.operators()
      })
      browser = await Firefox.launch()
      page = browser.page
      sale = await ActionsScenario.sale(worker)
      reversal = await ActionsScenario.reversalInDoubt(worker, sale.guid, "ff-rev-in-doubt")
    }, 240_000)

    afterAll(async () => {
      await browser?.close()
      await worker?.stop()
    }, 60_000)

    it("ana resolves the reversal as not applied: recorded on the sale's history in her name; a second time is refused", async () => {
      await page.goto(`${worker.base}/console`)
      await page.locator("#name").fill("ana")
      await page.locator("#token").fill("ana-secret")
      await page.click("button[type=submit]")
      await page.waitForSelector("nav")
      await page.goto(`${worker.base}/console#/executions/${reversal}`)
      await page.locator("#resolve-open").click()
      await page.waitForSelector("#resolve-dialog")
      // Neither chosen: said so, nothing sent.
      await page.locator("#resolve-reason").fill("the acquirer's report shows no reversal")
      await page.click("#resolve-send")
      await expect.poll(() => text(page, "#resolve-error")).toContain("applied or not")
      await page.click("#resolve-not-applied")
      await page.locator("#resolve-status").fill("NOT FOUND")
      await page.click("#resolve-send")
      await expect
        .poll(() => text(page, "#resolve-notice"), { timeout: 30_000 })
        .toContain("recorded in ana's name")
      await expect
        .poll(async () => (await ActionsScenario.timeline(worker, sale.guid)).join("\n"), { timeout: 30_000 })
        .toContain(
          "[ff-rev-in-doubt] reversal resolved by ana as not applied: the acquirer's report shows no reversal; the status endpoint said: NOT FOUND"
        )

      await page.locator("#resolve-open").click()
      await page.waitForSelector("#resolve-dialog")
      await page.click("#resolve-applied")
      await page.locator("#resolve-reason").fill("again")
      await page.click("#resolve-send")
      await expect
        .poll(() => text(page, "#resolve-error"), { timeout: 30_000 })
        .toContain("resolve-only-in-doubt")
    }, 120_000)
  }
)
