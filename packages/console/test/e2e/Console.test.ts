/**
 * The console in a real browser (Chromium driven by Playwright) against a real worker
 * started the way `npm start` starts it, on the built-in simulator: refused without the
 * credential, log in, a sale started on the simulator appearing and completing live, its
 * timeline, found by its idempotency key, a forced result mismatch appearing under alerts,
 * a terminal busy then idle, the ledger exported as CSV and its chain verified, keyboard
 * navigation and a phone-width viewport. Each page's screenshot is written to
 * `build/console-screenshots/` (`npm run docs:screenshots` writes them to `docs/console/`).
 * Without Chromium the tests are skipped, except under CI, where they fail.
 * What does not depend on the browser is shared with the Firefox tests (`Scenario.ts`).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Chromium from "../../src/testing/Chromium.js"
import {
  focused,
  inCi,
  mark,
  marked,
  masked,
  pan,
  refusedWithoutCredential,
  requireBrowser,
  shots
} from "./Scenario.js"
import * as Scenario from "./Scenario.js"
import * as Worker from "./Worker.js"

describe.skipIf(!Chromium.available() && !inCi)("the console in Chromium", () => {
  let worker: Worker.Worker
  let browser: Chromium.Launched
  let context: BrowserContext
  let page: Page
  const key = `console-e2e-${Date.now()}`

  const shot = (p: Page, name: string) =>
    p.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true })
  // The worker's API as the test calls it (Scenario.ts), the worker being started in beforeAll.
  const api: ReturnType<typeof Scenario.client>["api"] = (...args) => Scenario.client(worker).api(...args)
  const terminals = () => Scenario.client(worker).terminals()

  beforeAll(async () => {
    requireBrowser("Chromium", Chromium.available(), Chromium.executablePath, "chromium")
    fs.mkdirSync(shots, { recursive: true })
    worker = await Worker.start({ TILLFLOW_CALLBACK_FALLBACK: "1 second" })
    browser = await Chromium.launch()
    context = browser.context
    page = context.pages()[0] ?? (await context.newPage())
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await worker?.stop()
  }, 60_000)

  it("refuses every request without the credential: the login page, or 401", async () => {
    await refusedWithoutCredential(worker)
    await page.goto(`${worker.base}/console`)
    await page.locator("#token").waitFor()
    expect(await page.locator("nav").count()).toBe(0)
    await shot(page, "login")
  })

  it("logs in with the intake token, kept in an HttpOnly, SameSite=Strict cookie the page cannot read", async () => {
    await page.fill("#token", "not-the-token")
    await page.click("button[type=submit]")
    await expect.poll(() => page.locator("#login-error").textContent()).toContain("wrong token")
    await page.fill("#token", worker.token)
    await page.click("button[type=submit]")
    await page.locator("nav").waitFor()
    const cookies = await context.cookies(worker.base)
    const session = cookies.find((c) => c.name === "tillflow_console")
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/" })
    expect(await page.evaluate("document.cookie")).toBe("")
    expect(await page.locator(".simulated").first().textContent()).toContain("SIMULATED")
  })

  it("a sale started on the simulator appears on the executions page and completes there, live", async () => {
    await Scenario.client(worker).cardOnFirstTerminal()
    await page.goto(`${worker.base}/console#/executions`)
    await page.locator("#executions").waitFor()
    await mark(page)
    const form = await context.newPage()
    await form.goto(`${worker.base}/console#/simulator`)
    await form.locator("#sale-amount").fill("10.50")
    await form.locator("#sale-key").fill(key)
    await shot(form, "simulator")
    await form.click("form.sale button[type=submit]")
    await form.waitForURL(/#\/executions\/[0-9a-f]+/)
    const row = page.locator(`tr[data-key="${key}"]`)
    await row.waitFor({ timeout: 30_000 })
    await expect.poll(() => row.locator(".badge").textContent(), { timeout: 30_000 }).toBe("approved")
    expect(await row.textContent()).toContain("10.50 EUR")
    expect(await marked(page)).toBe(true)
    await shot(page, "executions")
    await form.close()
  })

  it("opens the sale's page: its timeline told as a story, the outcome, the card masked", async () => {
    await page.locator(`tr[data-key="${key}"] a`).first().click()
    await page.locator("#timeline li").first().waitFor()
    const story = await page.locator("#timeline").textContent()
    expect(story).toMatch(/AUTHORISED|approved/i)
    expect(await page.locator(".facts").textContent()).toContain(masked)
    await shot(page, "execution")
    await page.getByRole("button", { name: "Show the raw event history" }).click()
    await page.locator("#raw-history pre").first().waitFor()
    expect(await page.locator("#raw-history").textContent()).toContain("OperationRequested")
    expect(await page.locator("#raw-history").textContent()).toContain(masked)
    expect(await page.locator("body").textContent()).not.toContain(pan)
  })

  it("finds the sale by its idempotency key", async () => {
    await page.goto(`${worker.base}/console#/executions`)
    await page.locator("#executions").waitFor()
    await page.fill("#f-q", key)
    await page.press("#f-q", "Enter")
    await expect.poll(() => page.locator("#executions tbody tr").count()).toBe(1)
    expect(await page.locator(`#executions tbody tr[data-key="${key}"]`).count()).toBe(1)
    expect(page.url()).toContain(`q=${key}`)
  })

  it("a result mismatch forced on the simulator appears under alerts, live", async () => {
    await page.goto(`${worker.base}/console#/alerts`)
    await page.locator("#no-alerts").waitFor()
    await mark(page)
    // The result is delivered late; meanwhile the status host says DECLINED for an authorised sale.
    expect((await api("POST", `${worker.admin}/faults/callback-outage`, { ms: 6000 }, false)).status).toBe(
      200
    )
    expect(
      (
        await api(
          "POST",
          `${worker.admin}/faults`,
          { kind: "misreport", host: "status", finStatus: "DECLINED" },
          false
        )
      ).status
    ).toBe(201)
    const started = await api("POST", `${worker.base}/v1/operations`, {
      idempotencyKey: `${key}-mismatch`,
      delivery: "callback",
      request: { operation: "sale", serial_number: (await terminals())[0], amount: "2000", currency: "EUR" }
    })
    expect(started.status).toBe(200)
    const mismatch = page.locator("tr.alert-mismatch")
    await mismatch.waitFor({ timeout: 60_000 })
    expect(await mismatch.textContent()).toContain("says AUTHORISED but DECLINED was recorded")
    expect(await marked(page)).toBe(true)
    await shot(page, "alerts")
  })

  it("acknowledges the alert with a reason (who and why shown), then resolves it: hidden unless asked for", async () => {
    const row = page.locator("tr.alert-mismatch").first()
    await row.locator("button.alert-acknowledge").click()
    await row.locator("form.alert-form input[name=reason]").fill("calling the acquirer")
    await row.locator("form.alert-form button[type=submit]").click()
    await expect
      .poll(() => row.locator(".alert-acknowledged").textContent(), { timeout: 10_000 })
      .toMatch(/^acknowledged by \S+, .*: calling the acquirer$/)
    expect(await row.locator(".badge-acknowledged").count()).toBe(1)
    expect(await row.locator("button.alert-acknowledge").count()).toBe(0)
    await shot(page, "alert-acknowledged")
    const id = await row.getAttribute("data-alert")
    await row.locator("button.alert-resolve").click()
    await row.locator("form.alert-form input[name=reason]").fill("the acquirer confirms the decline")
    await row.locator("form.alert-form button[type=submit]").click()
    await expect.poll(() => page.locator(`tr[data-alert="${id}"]`).count(), { timeout: 10_000 }).toBe(0)
    await page.selectOption("#alert-state", "all")
    const resolved = page.locator(`tr[data-alert="${id}"]`)
    await resolved.waitFor()
    expect(page.url()).toContain("state=all")
    expect(await resolved.locator(".alert-resolved").textContent()).toContain(
      "the acquirer confirms the decline"
    )
    expect(await resolved.locator(".alert-acknowledged").textContent()).toContain("calling the acquirer")
  })

  it("shows a terminal busy with its operation, then idle again, live", async () => {
    const serial = (await terminals())[1] ?? ""
    await page.goto(`${worker.base}/console#/terminals`)
    const card = page.locator(`[data-serial="${serial}"]`)
    await card.waitFor()
    expect(await card.locator(".badge").first().textContent()).toBe("idle")
    expect((await api("POST", `${worker.admin}/terminals/${serial}/offline`, {}, false)).status).toBe(200)
    await api("POST", `${worker.base}/v1/operations`, {
      idempotencyKey: `${key}-offline`,
      request: { operation: "sale", serial_number: serial, amount: "1234", currency: "EUR" }
    })
    await expect.poll(() => card.locator(".badge").first().textContent(), { timeout: 30_000 }).toBe("busy")
    expect(await card.textContent()).toContain("12.34 EUR")
    await shot(page, "terminals")
    expect((await api("POST", `${worker.admin}/terminals/${serial}/online`, {}, false)).status).toBe(200)
    await expect.poll(() => card.locator(".badge").first().textContent(), { timeout: 60_000 }).toBe("idle")
  })

  it("exports the ledger as CSV in major units and verifies the hash chain", async () => {
    await page.goto(`${worker.base}/console#/ledger`)
    await page.locator("#ledger tbody tr").first().waitFor()
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export-csv")])
    const file = await download.path()
    const csv = fs.readFileSync(file, "utf8")
    const [header, ...rows] = csv.trim().split("\n")
    expect(header?.startsWith("day,terminal,merchant,currency,sale_count,sale_amount")).toBe(true)
    expect(rows.some((r) => r.includes(",EUR,") && r.includes(",10.50,"))).toBe(true)
    await page.click("#verify-chain")
    await expect
      .poll(() => page.locator("#verify-result").textContent(), { timeout: 30_000 })
      .toMatch(/^Chain verified: \d+ streams, \d+ events/)
    await shot(page, "ledger")
  })

  it("is usable from the keyboard: skip link, then the navigation", async () => {
    await page.goto(`${worker.base}/console#/alerts`)
    await page.reload()
    await page.locator("#main h1").waitFor()
    await page.keyboard.press("Tab")
    expect(await focused(page)).toBe("Skip to content")
    let reached = false
    for (let i = 0; i < 10 && !reached; i++) {
      await page.keyboard.press("Tab")
      reached = (await focused(page)) === "Executions"
    }
    expect(reached).toBe(true)
    await page.keyboard.press("Enter")
    await page.locator("#executions").waitFor()
    expect(await page.locator("nav a[aria-current=page]").textContent()).toBe("Executions")
    // The new page's content has the focus: the next Tab reaches its search field.
    await page.keyboard.press("Tab")
    expect(await page.evaluate("document.activeElement && document.activeElement.id")).toBe("f-q")
  })

  it("is readable at a phone's width: nothing wider than the screen", async () => {
    const phone = await context.newPage()
    await phone.setViewportSize({ width: 390, height: 844 })
    for (const [route, name] of [
      ["executions", "phone-executions"],
      ["ledger", "phone-ledger"]
    ] as const) {
      await phone.goto(`${worker.base}/console#/${route}`)
      await phone.locator(`#${route} tbody tr`).first().waitFor()
      expect(await phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true)
      await shot(phone, name)
    }
    await phone.close()
  })

  it("logs out: the cookie no longer opens anything", async () => {
    const cookie = (await context.cookies(worker.base)).find((c) => c.name === "tillflow_console")
    await page.click("text=Log out")
    await page.locator("#token").waitFor()
    const after = await fetch(`${worker.base}/v1/monitor/alerts`, {
      headers: { cookie: `tillflow_console=${cookie?.value ?? ""}` }
    })
    expect(after.status).toBe(401)
  })
})
