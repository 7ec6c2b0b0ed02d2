/**
 * The console of an operator limited to merchants (issue 32), in Chromium (Playwright)
 * against a real worker serving two merchants: lena (cafe-sol's) sees the merchant she acts
 * for, first her merchant's alerts, her merchant's terminal and not the other's, her
 * merchant's executions and not the other's, no link to the pages that span every
 * merchant, her merchant's ledger only, opens one of her executions (another merchant's is not found), and a new sale
 * of hers shows up without a reload, through the live feed filtered to her merchant (the
 * status line says `live`; nothing is polled) while the other merchant's does not; her
 * console never calls a route refused to her. max (both merchants) chooses the merchant he
 * acts for — his feed follows it — and refunds one of its sales.
 */
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Chromium from "../../src/testing/Chromium.js"
import * as ActionsScenario from "./ActionsScenario.js"
import { inCi, mark, marked, requireBrowser } from "./Scenario.js"
import {
  merchantPages,
  merchants,
  platformPages,
  platformRoutes,
  sale,
  setUp,
  start,
  terminalsOf
} from "./ScopedScenario.js"
import type * as Worker from "./Worker.js"

const [cafe, tea] = merchants

describe.skipIf(!Chromium.available() && !inCi)("an operator limited to a merchant (Chromium)", () => {
  let worker: Worker.Worker
  let browser: Chromium.Launched
  let context: BrowserContext
  let page: Page
  const requested: Array<string> = []
  const refused: Array<string> = []
  // The live feed's requests, with their query (the merchant they name), and their answers.
  const feeds: Array<string> = []

  beforeAll(async () => {
    requireBrowser("Chromium", Chromium.available(), Chromium.executablePath, "chromium")
    worker = await start()
    await setUp(worker)
    browser = await Chromium.launch()
    context = browser.context
    page = context.pages()[0] ?? (await context.newPage())
    page.on("request", (request) => requested.push(new URL(request.url()).pathname))
    page.on("response", (response) => {
      const url = new URL(response.url())
      if (response.status() === 403) refused.push(url.pathname)
      if (url.pathname === "/v1/monitor/live") feeds.push(`${url.search} ${response.status()}`)
    })
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
    await worker?.stop()
  }, 60_000)

  it("sees her merchant's executions only, no platform page, and opens one of hers", async () => {
    const own = await sale(worker, cafe)
    const other = await sale(worker, tea)
    await ActionsScenario.login(page, worker, "lena", "lena-secret")

    // Whom she acts for, and only the pages she may use.
    expect(await page.locator("#acting-for").textContent()).toBe("Merchant cafe-sol")
    for (const name of platformPages) expect(await page.locator(`nav a[data-page=${name}]`).count()).toBe(0)
    for (const name of merchantPages) expect(await page.locator(`nav a[data-page=${name}]`).count()).toBe(1)

    // Her first page: her merchant's alerts (none: its sales were approved).
    await page.locator("#no-alerts").waitFor()
    // Her terminals: her merchant's device list's, not the other merchant's.
    await page.click("nav a[data-page=terminals]")
    await page.locator(`section[data-serial="${cafe.serial}"]`).waitFor()
    expect(await page.locator("section.terminal").count()).toBe(1)

    // Her executions: her merchant's, not the other merchant's.
    await page.click("nav a[data-page=executions]")
    await page.locator(`tr[data-execution="${own}"]`).waitFor()
    expect(await page.locator(`tr[data-execution="${other}"]`).count()).toBe(0)
    expect(await page.locator("#executions caption").textContent()).toMatch(/^1 executions/)

    // The live feed, as the platform's console has it: filtered on the server to her merchant.
    await expect.poll(() => page.locator("#live-status").textContent()).toBe("live")
    expect(feeds).toEqual(["?merchant=cafe-sol 200"])

    // A new sale of hers appears without a reload, told by the feed (nothing polls); the
    // other merchant's does not.
    await mark(page)
    const later = await sale(worker, cafe)
    const otherLater = await sale(worker, tea)
    await page.locator(`tr[data-execution="${later}"]`).waitFor({ timeout: 15_000 })
    expect(await marked(page)).toBe(true)
    expect(await page.locator(`tr[data-execution="${otherLater}"]`).count()).toBe(0)
    expect(await page.locator("#live-status").textContent()).toBe("live")

    // One of hers, opened from the list: its outcome, its timeline, its actions, its history.
    await page.locator(`tr[data-execution="${own}"] a`).click()
    await page.locator(".verdict").waitFor()
    expect(await page.locator(".verdict").textContent()).toContain("approved")
    await expect.poll(() => page.locator("#timeline").textContent()).toMatch(/AUTHORISED|approved/i)
    await page.locator("button[data-action=refund]").waitFor()
    await page.click("button[aria-controls=raw-history]")
    await page.locator("#raw-history li").first().waitFor()
    expect(await page.locator("main p.error").count()).toBe(0)

    // Another merchant's execution is not found, as an id no one knows.
    await page.goto(`${worker.base}/console#/executions/${other}`)
    await expect.poll(() => page.locator("main p.error").first().textContent()).toContain(`no execution`)
    expect(await page.locator(".verdict").count()).toBe(0)

    // Her ledger: her merchant's terminal only (the server filters it), no chain check.
    await page.goto(`${worker.base}/console#/ledger`)
    await page.locator("#ledger tbody tr").first().waitFor()
    expect(await page.locator("#ledger tbody tr td:nth-child(2)").allTextContents()).toEqual([cafe.serial])
    expect(await page.locator("#verify-chain").count()).toBe(0)

    // Her console called nothing refused to her: no chain check, no registry; her alerts and
    // terminals were answered, not refused.
    expect(requested).toEqual(expect.arrayContaining(["/v1/monitor/alerts", "/v1/monitor/terminals"]))
    expect(requested.filter((path) => platformRoutes.some((route) => path.startsWith(route)))).toEqual([])
    expect(refused).toEqual([])
  }, 120_000)

  it("an operator of two merchants chooses the one he acts for", async () => {
    // Off the console's page first: its reads would get 401 and go to the login page itself.
    await page.goto(`${worker.base}/console/assets/console.css`)
    await context.clearCookies()
    await ActionsScenario.login(page, worker, "max", "max-secret")
    await page.goto(`${worker.base}/console#/executions`)
    await page.locator("#executions").waitFor()
    expect(await page.locator("#acting-for option").allTextContents()).toEqual([
      "Merchant cafe-sol",
      "Merchant tea-house"
    ])
    const cafeRows = await page.locator("#executions tbody tr").count()
    expect(cafeRows).toBe(2)
    await page.selectOption("#acting-for", tea.id)
    await page.waitForLoadState("load")
    await expect.poll(() => page.locator("#acting-for").inputValue()).toBe(tea.id)
    // His feed follows the merchant he acts for.
    await expect.poll(() => page.locator("#live-status").textContent()).toBe("live")
    expect(feeds.at(-1)).toBe("?merchant=tea-house 200")
    await page.locator("#executions").waitFor()
    // Every row now is tea-house's: its terminal's.
    await expect
      .poll(() => page.locator("#executions tbody tr td:nth-child(4)").allTextContents())
      .toEqual([tea.serial, tea.serial])

    // He refunds part of a tea-house sale: the request names the merchant (of two, it must).
    await page.locator("#executions tbody tr a").first().click()
    await page.locator("#actions button[data-action=refund]").click()
    await page.locator("#action-dialog").waitFor()
    await page.fill("#action-amount", "1.00")
    await page.fill("#action-reason", "one item returned")
    await page.dblclick("#action-send")
    await page.locator("#action-notice a").waitFor()
    // The refund is tea-house's, on its terminal; cafe-sol has none.
    await expect.poll(() => terminalsOf(worker, tea, "refund")).toEqual([tea.serial])
    expect(await terminalsOf(worker, cafe, "refund")).toEqual([])
    expect(refused).toEqual([])
  }, 120_000)
})
