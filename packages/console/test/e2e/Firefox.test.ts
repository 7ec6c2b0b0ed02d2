/**
 * The console's essential scenarios in Firefox (Debian's stock `firefox-esr`, driven over
 * WebDriver BiDi by puppeteer-core: `src/testing/Firefox.ts` says why not Playwright) against
 * a real worker started the way `npm start` starts it, on the built-in simulator: refused
 * without the credential, log in, a sale started on the simulator appearing and completing
 * live, its timeline, found by its idempotency key, keyboard navigation, and an alert
 * acknowledged with a reason. The rest (the alerts' other steps, terminals, ledger, phone width, logout, screenshots) runs in Chromium
 * (`Console.test.ts`); both share `Scenario.ts`. Without Firefox the tests are skipped,
 * except under CI, where they fail.
 */
import type { Page } from "puppeteer-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Firefox from "../../src/testing/Firefox.js"
import {
  client,
  count,
  documentCookie,
  focused,
  focusedId,
  inCi,
  mark,
  marked,
  masked,
  pan,
  refusedWithoutCredential,
  requireBrowser,
  text
} from "./Scenario.js"
import * as Worker from "./Worker.js"

describe.skipIf(!Firefox.available() && !inCi)("the console in Firefox", () => {
  let worker: Worker.Worker
  let browser: Firefox.Launched
  let page: Page
  const key = `console-firefox-${Date.now()}`
  /** The script errors and error messages of every page, over the whole run. */
  const problems: Array<string> = []
  const watch = (p: Page) => {
    p.on("pageerror", (error) => problems.push(`${p.url()}: ${String(error)}`))
    p.on("console", (message) => {
      if (message.type() === "error") problems.push(`${p.url()}: ${message.text()}`)
    })
  }

  /** Opens a route of the console (a full navigation, as typing the address would). */
  const open = async (p: Page, route: string, ready: string) => {
    await p.goto(`${worker.base}/console#/${route}`)
    await p.waitForSelector(ready)
  }

  beforeAll(async () => {
    requireBrowser("Firefox", Firefox.available(), Firefox.executablePath, "firefox-esr")
    worker = await Worker.start({ TILLFLOW_CALLBACK_FALLBACK: "1 second" })
    browser = await Firefox.launch()
    page = browser.page
    watch(page)
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await worker?.stop()
  }, 60_000)

  it("refuses every request without the credential: the login page, or 401", async () => {
    await refusedWithoutCredential(worker)
    await page.goto(`${worker.base}/console`)
    await page.waitForSelector("#token")
    expect(await count(page, "nav")).toBe(0)
  })

  it("logs in with the intake token, kept in an HttpOnly, SameSite=Strict cookie the page cannot read", async () => {
    await page.locator("#token").fill("not-the-token")
    await page.click("button[type=submit]")
    await expect.poll(() => text(page, "#login-error")).toContain("wrong token")
    await page.locator("#token").fill(worker.token)
    await page.click("button[type=submit]")
    await page.waitForSelector("nav")
    const session = (await browser.browser.cookies()).find((c) => c.name === "tillflow_console")
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/" })
    expect(await documentCookie(page)).toBe("")
    expect(await text(page, ".simulated")).toContain("SIMULATED")
  })

  it("a sale started on the simulator appears on the executions page and completes there, live", async () => {
    await client(worker).cardOnFirstTerminal()
    await open(page, "executions", "#executions")
    await mark(page)
    const form = await browser.browser.newPage()
    watch(form)
    await open(form, "simulator", "#sale-amount")
    await form.locator("#sale-amount").fill("10.50")
    await form.locator("#sale-key").fill(key)
    await form.click("form.sale button[type=submit]")
    await form.waitForFunction("/#\\/executions\\/[0-9a-f]+/.test(location.hash)")
    const row = `tr[data-key="${key}"]`
    await page.waitForSelector(row, { timeout: 30_000 })
    await expect.poll(() => text(page, `${row} .badge`), { timeout: 30_000 }).toBe("approved")
    expect(await text(page, row)).toContain("10.50 EUR")
    expect(await marked(page)).toBe(true)
    await form.close()
  })

  it("opens the sale's page: its timeline told as a story, the outcome, the card masked", async () => {
    // A locator: the live table may redraw the row between finding its link and clicking it.
    await page.locator(`tr[data-key="${key}"] a`).click()
    await page.waitForSelector("#timeline li")
    expect(await text(page, "#timeline")).toMatch(/AUTHORISED|approved/i)
    expect(await text(page, ".facts")).toContain(masked)
    await page.locator("::-p-aria(Show the raw event history)").click()
    await page.waitForSelector("#raw-history pre")
    expect(await text(page, "#raw-history")).toContain("OperationRequested")
    expect(await text(page, "#raw-history")).toContain(masked)
    expect(await text(page, "body")).not.toContain(pan)
  })

  it("finds the sale by its idempotency key", async () => {
    await open(page, "executions", "#executions")
    await page.locator("#f-q").fill(key)
    await page.focus("#f-q")
    await page.keyboard.press("Enter")
    await expect.poll(() => count(page, "#executions tbody tr")).toBe(1)
    expect(await count(page, `#executions tbody tr[data-key="${key}"]`)).toBe(1)
    expect(page.url()).toContain(`q=${key}`)
  })

  it("is usable from the keyboard: skip link, then the navigation", async () => {
    await page.goto(`${worker.base}/console#/alerts`)
    await page.reload()
    await page.waitForSelector("#main h1")
    await page.keyboard.press("Tab")
    expect(await focused(page)).toBe("Skip to content")
    let reached = false
    for (let i = 0; i < 10 && !reached; i++) {
      await page.keyboard.press("Tab")
      reached = (await focused(page)) === "Executions"
    }
    expect(reached).toBe(true)
    await page.keyboard.press("Enter")
    await page.waitForSelector("#executions")
    expect(await text(page, "nav a[aria-current=page]")).toBe("Executions")
    // The new page's content has the focus: the next Tab reaches its search field.
    await page.keyboard.press("Tab")
    expect(await focusedId(page)).toBe("f-q")
  })

  it("acknowledges an alert with a reason: who and why shown, the Acknowledge button gone", async () => {
    await client(worker).forceMismatch(`${key}-mismatch`)
    await open(page, "alerts", "#main h1")
    await page.waitForSelector("tr.alert-mismatch button.alert-acknowledge", { timeout: 60_000 })
    await page.click("tr.alert-mismatch button.alert-acknowledge")
    await page.waitForSelector("tr.alert-mismatch form.alert-form input[name=reason]")
    await page.type("tr.alert-mismatch form.alert-form input[name=reason]", "calling the acquirer")
    await page.click("tr.alert-mismatch form.alert-form button[type=submit]")
    await expect
      .poll(() => text(page, "tr.alert-mismatch .alert-acknowledged"), { timeout: 10_000 })
      .toMatch(/^acknowledged by \S+, .*: calling the acquirer$/)
    expect(await count(page, "tr.alert-mismatch button.alert-acknowledge")).toBe(0)
    expect(await count(page, "tr.alert-mismatch .badge-acknowledged")).toBe(1)
  }, 90_000)

  it("raised no script error and logged no error on any page", () => {
    expect(problems).toEqual([])
  })
})
