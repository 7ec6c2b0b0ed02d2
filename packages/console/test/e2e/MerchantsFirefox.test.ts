/**
 * The Merchants page in Firefox (Puppeteer over WebDriver BiDi), as the Chromium test does
 * (`Merchants.test.ts`): an admin registers a merchant, adds a key in a password field (sent
 * once on a double click, shown nowhere afterwards), sees its acquirer and rate limit (the
 * deployment's, then its own once set) and disables the merchant after a confirmation; an operator is offered no Merchants page and is refused the list (403).
 */
import type { Page } from "puppeteer-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Firefox from "../../src/testing/Firefox.js"
import { configure, listed, secretKey, start } from "./MerchantsScenario.js"
import { count, inCi, requireBrowser, text } from "./Scenario.js"
import type * as Worker from "./Worker.js"

describe.skipIf(!Firefox.available() && !inCi)("the Merchants page (Firefox)", () => {
  let worker: Worker.Worker
  let browser: Firefox.Launched
  let page: Page

  const login = async (name: string) => {
    await page.goto(`${worker.base}/console`)
    // Logged out first: the login page when there is no session.
    await page.evaluate(() => fetch("/console/logout", { method: "POST" }).then(() => undefined))
    await page.goto(`${worker.base}/console`)
    await page.locator("#name").fill(name)
    await page.locator("#token").fill(`${name}-secret`)
    await page.click("button[type=submit]")
    await page.waitForSelector("nav")
  }

  beforeAll(async () => {
    requireBrowser("Firefox", Firefox.available(), Firefox.executablePath, "firefox-esr")
    worker = await start()
    browser = await Firefox.launch()
    page = browser.page
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
    await worker?.stop()
  }, 60_000)

  it("an admin registers a merchant, adds a key sent once and never shown again, and disables it", async () => {
    await login("ada")
    await page.waitForSelector("nav a[data-page=merchants]")
    await page.click("nav a[data-page=merchants]")
    await page.waitForSelector("#no-merchants")

    await page.click("#merchant-register-open")
    await page.locator("#merchant-id").fill("m-ff")
    await page.locator("#merchant-name").fill("Café Firefox")
    await page.locator("#merchant-mcc").fill("5812")
    await page.click("#merchant-register-send", { count: 2 })
    await page.waitForSelector("tr[data-merchant=m-ff]")
    expect(await text(page, "#merchants-notice")).toBe("m-ff registered.")

    await page.click("tr[data-merchant=m-ff] button[data-action=add-key]")
    expect(await page.evaluate('document.querySelector("#merchant-key").type')).toBe("password")
    await page.locator("#merchant-key").fill(secretKey)
    await page.click("#merchant-key-send", { count: 2 })
    await page.waitForSelector("tr[data-merchant=m-ff] li[data-key]")
    expect((await listed(worker))[0]?.keys.map((k) => k.state)).toEqual(["active"])
    expect(await count(page, "#merchant-key")).toBe(0)
    expect(await page.content()).not.toContain(secretKey)

    // Its acquirer and rate limit: the deployment's, then its own once set through the API.
    const row = "tr[data-merchant=m-ff]"
    expect(await text(page, `${row} .merchant-rate-limit`)).toBe("deployment's")
    await configure(
      worker,
      "m-ff",
      { partialReversal: false },
      { count: 600, intervalMillis: 60_000, burst: 30 }
    )
    await page.reload()
    await page.waitForSelector(row)
    expect(await text(page, `${row} .merchant-rate-limit`)).toBe("600/min (burst 30)")
    expect(await text(page, `${row} [data-capability="partial reversal"]`)).toBe("partial reversal: no")
    expect(await text(page, `${row} [data-capability="capture reversal"]`)).toBe(
      "capture reversal: deployment's"
    )

    await page.click("tr[data-merchant=m-ff] button[data-action=disable]")
    expect(await text(page, "#merchant-state-question")).toContain("Disable Café Firefox (m-ff)?")
    await page.click("#merchant-state-send", { count: 2 })
    await expect
      .poll(() => text(page, "tr[data-merchant=m-ff] .merchant-state"), { timeout: 10_000 })
      .toBe("disabled")
    expect((await listed(worker)).map((m) => [m.id, m.enabled])).toEqual([["m-ff", false]])
    expect(worker.stderr()).not.toContain(secretKey)
  }, 120_000)

  it("an operator is not offered the page, and the server refuses them the list (403)", async () => {
    await login("ana")
    expect(await count(page, "nav a[data-page=merchants]")).toBe(0)
    expect(await page.evaluate(async () => (await fetch("/v1/merchants")).status)).toBe(403)
  }, 60_000)
})
