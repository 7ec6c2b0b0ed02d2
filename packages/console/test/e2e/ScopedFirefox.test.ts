/**
 * The console of an operator limited to merchants in Firefox (Puppeteer over WebDriver
 * BiDi), as the Chromium test does (`Scoped.test.ts`): lena (cafe-sol's) sees whom she acts
 * for, first her merchant's alerts, her merchant's terminal and not the other's, her
 * merchant's executions and not the other merchant's, no link to the platform's
 * pages, a new sale of hers without a reload through the live feed (the status line says
 * `live`; nothing is polled), and opens one of hers; her page asked for no route refused to
 * her; max (both merchants) chooses the merchant he acts for.
 */
import type { Page } from "puppeteer-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Firefox from "../../src/testing/Firefox.js"
import { count, inCi, mark, marked, requireBrowser, text } from "./Scenario.js"
import {
  merchantPages,
  merchants,
  platformPages,
  platformRoutes,
  sale,
  setUp,
  start
} from "./ScopedScenario.js"
import type * as Worker from "./Worker.js"

const [cafe, tea] = merchants

describe.skipIf(!Firefox.available() && !inCi)("an operator limited to a merchant (Firefox)", () => {
  let worker: Worker.Worker
  let browser: Firefox.Launched
  let page: Page

  const login = async (name: string) => {
    // Logged out first, from a page of the origin that runs no script (the console's page
    // would read, get 401 and go to the login page itself, racing the test's navigation).
    await page.goto(`${worker.base}/console/assets/console.css`)
    await page.evaluate(() => fetch("/console/logout", { method: "POST" }).then(() => undefined))
    await page.goto(`${worker.base}/console`)
    await page.locator("#name").fill(name)
    await page.locator("#token").fill(`${name}-secret`)
    await page.click("button[type=submit]")
    await page.waitForSelector("nav")
  }

  /** The paths this page load asked for (the browser's resource timing). */
  const asked = async (): Promise<ReadonlyArray<string>> =>
    (await page.evaluate(
      'performance.getEntriesByType("resource").map((e) => new URL(e.name).pathname)'
    )) as ReadonlyArray<string>

  beforeAll(async () => {
    requireBrowser("Firefox", Firefox.available(), Firefox.executablePath, "firefox-esr")
    worker = await start()
    await setUp(worker)
    browser = await Firefox.launch()
    page = browser.page
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
    await worker?.stop()
  }, 60_000)

  it("sees her merchant's executions only, no platform page, and opens one of hers", async () => {
    const own = await sale(worker, cafe)
    const other = await sale(worker, tea)
    await login("lena")

    expect(await text(page, "#acting-for")).toBe("Merchant cafe-sol")
    for (const name of platformPages) expect(await count(page, `nav a[data-page=${name}]`)).toBe(0)
    for (const name of merchantPages) expect(await count(page, `nav a[data-page=${name}]`)).toBe(1)

    // First her merchant's alerts (none), then her terminals: her merchant's only.
    await page.waitForSelector("#no-alerts")
    await page.click("nav a[data-page=terminals]")
    await page.waitForSelector(`section[data-serial="${cafe.serial}"]`)
    expect(await count(page, "section.terminal")).toBe(1)

    await page.click("nav a[data-page=executions]")
    await page.waitForSelector(`tr[data-execution="${own}"]`)
    expect(await count(page, `tr[data-execution="${other}"]`)).toBe(0)

    // The live feed, filtered on the server to her merchant, as the platform's console has it.
    await expect.poll(() => text(page, "#live-status")).toBe("live")

    // A new sale of hers appears without a reload, told by the feed (nothing polls); the
    // other merchant's does not.
    await mark(page)
    const later = await sale(worker, cafe)
    const otherLater = await sale(worker, tea)
    await page.waitForSelector(`tr[data-execution="${later}"]`, { timeout: 15_000 })
    expect(await marked(page)).toBe(true)
    expect(await count(page, `tr[data-execution="${otherLater}"]`)).toBe(0)
    expect(await text(page, "#live-status")).toBe("live")

    await page.click(`tr[data-execution="${own}"] a`)
    await page.waitForSelector(".verdict")
    expect(await text(page, ".verdict")).toContain("approved")
    await page.waitForSelector("button[data-action=refund]")
    expect(await count(page, "main p.error")).toBe(0)

    // Her page asked for nothing that spans every merchant (no chain check, no registry).
    expect((await asked()).filter((path) => platformRoutes.some((route) => path.startsWith(route)))).toEqual(
      []
    )
  }, 120_000)

  it("an operator of two merchants chooses the one he acts for", async () => {
    await login("max")
    await page.goto(`${worker.base}/console#/executions`)
    await page.waitForSelector("#executions")
    expect(
      await page.evaluate('[...document.querySelectorAll("#acting-for option")].map((o) => o.textContent)')
    ).toEqual(["Merchant cafe-sol", "Merchant tea-house"])
    await page.select("#acting-for", tea.id)
    await expect
      .poll(
        () =>
          page.evaluate(
            '[...document.querySelectorAll("#executions tbody tr td:nth-child(4)")].map((td) => td.textContent)'
          ),
        { timeout: 15_000 }
      )
      .toEqual([tea.serial, tea.serial])
    expect(await page.evaluate('document.querySelector("#acting-for").value')).toBe(tea.id)
  }, 120_000)
})
