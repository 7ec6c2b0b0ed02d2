/**
 * The executions page at scale, in Chromium, against a worker on PostgreSQL whose queue
 * holds 10,000 executions seeded beside real sales: every page of 100 reached with
 * "Older →" (each execution once, newest first), "← Newer" back; declined payments
 * filtered by outcome (a declined sale is `declined`, never `succeeded`); times written
 * with their zone, UTC unless the viewer chooses theirs. Needs PostgreSQL (`DATABASE_URL`,
 * which CI sets) and `psql` to seed it; skipped without them.
 */
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Chromium from "../../src/testing/Chromium.js"
import * as Scenario from "./Scenario.js"
import * as Seeded from "./Seeded.js"
import * as Worker from "./Worker.js"

const seeded = 10_000

describe.skipIf(!Chromium.available() || Seeded.databaseUrl === undefined || !Seeded.psqlAvailable)(
  "the executions page at scale in Chromium",
  () => {
    let worker: Worker.Worker
    let browser: Chromium.Launched
    let context: BrowserContext
    let page: Page
    const database = `console_paging_${Date.now()}`
    const key = `paging-${Date.now()}`
    let url = ""

    beforeAll(async () => {
      url = await Seeded.createDatabase(database)
      worker = await Worker.start({ DATABASE_URL: url })
      // 10,000 executions of a workflow no worker runs, one a second back from an hour ago.
      await Seeded.seedExecutions(url, seeded)
      // The viewer is in New York (the browser's zone), so their zone is not UTC.
      const tz = process.env["TZ"]
      process.env["TZ"] = "America/New_York"
      browser = await Chromium.launch()
      if (tz === undefined) delete process.env["TZ"]
      else process.env["TZ"] = tz
      context = browser.context
      page = context.pages()[0] ?? (await context.newPage())
      await page.goto(`${worker.base}/console`)
      await page.fill("#token", worker.token)
      await page.click("button[type=submit]")
      await page.locator("nav").waitFor()
    }, 180_000)

    afterAll(async () => {
      await browser?.close()
      await worker?.stop()
      if (url !== "") await Seeded.dropDatabase(database)
    }, 60_000)

    const rows = () =>
      page
        .locator("#executions tbody tr")
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-execution") ?? ""))

    /** Waits for the next page's rows: a first row, not the one before (a new page says Loading… first). */
    const turned = (before: string | undefined) =>
      expect
        .poll(
          async () => {
            const first = (await rows())[0]
            return first !== undefined && first !== before
          },
          { timeout: 20_000 }
        )
        .toBe(true)

    it("pages through 10,000 executions with Older and Newer, each once, newest first", async () => {
      await page.goto(`${worker.base}/console#/executions?workflow=Seeded`)
      await page.locator("#executions tbody tr").first().waitFor()
      expect(await page.locator("#executions caption").textContent()).toBe(
        "10000 executions, 1–100 shown, newest first"
      )
      const seen: Array<string> = []
      const firsts: Array<string> = []
      for (let p = 0; p < 100; p++) {
        const ids = await rows()
        expect(ids.length).toBe(100)
        firsts.push(ids[0] ?? "")
        seen.push(...ids)
        if (p === 99) break
        const before = ids[0]
        await page.click("#page-older")
        await turned(before)
      }
      expect(await page.locator("#page-older").count()).toBe(0)
      expect(await page.locator("#executions caption").textContent()).toBe(
        "10000 executions, 9901–10000 shown, newest first"
      )
      expect(new Set(seen).size).toBe(seeded)
      // Newest first: the seeds were created one second apart, seed-1 the newest.
      expect(seen[0]).toBe(await Seeded.seededId(url, 1))
      expect(seen[seeded - 1]).toBe(await Seeded.seededId(url, seeded))
      // Back two pages, then to the newest.
      for (const p of [98, 97]) {
        const before = (await rows())[0]
        await page.click("#page-newer")
        await turned(before)
        expect((await rows())[0]).toBe(firsts[p])
        expect(await page.locator("#executions caption").textContent()).toBe(
          `10000 executions, ${p * 100 + 1}–${p * 100 + 100} shown, newest first`
        )
      }
      await page.click("#page-newest")
      await expect.poll(async () => (await rows())[0], { timeout: 20_000 }).toBe(seen[0])
    }, 240_000)

    it("a live refresh that changes nothing re-renders nothing: the table shown stays the same element (a click under the pointer is not lost to a re-render)", async () => {
      await page.goto(`${worker.base}/console#/executions?workflow=Seeded`)
      await page.locator("#executions tbody tr").first().waitFor()
      await page.locator("#executions").evaluate((table) => table.setAttribute("data-shown", "before"))
      // A sale writes events: the live feed tells the page, which reads its list again.
      const refreshed = page.waitForResponse(
        (response) => response.url().includes("/v1/monitor/executions"),
        {
          timeout: 30_000
        }
      )
      const { api, terminals } = Scenario.client(worker)
      const [serial] = await terminals()
      const started = await api("POST", `${worker.base}/v1/operations`, {
        idempotencyKey: `${key}-live`,
        request: { operation: "sale", serial_number: serial, amount: "1200", currency: "EUR" }
      })
      expect(started.status).toBeLessThan(300)
      await (await refreshed).finished()
      // The answer handled (its rows rendered, or left as they are).
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 500)))
      // The seeded workflow's list did not change: the same table, the same rows.
      expect(await page.locator('#executions[data-shown="before"]').count()).toBe(1)
      expect(await page.locator("#executions tbody tr").count()).toBe(100)
    }, 60_000)

    it("filters declined payments by outcome: a declined sale is declined, an approved one is not listed; and by the amount asked", async () => {
      const { api, terminals } = Scenario.client(worker)
      const [serial] = await terminals()
      for (const [suffix, amount] of [
        ["approved", "1050"],
        ["declined", "3784"]
      ] as const) {
        const started = await api("POST", `${worker.base}/v1/operations`, {
          idempotencyKey: `${key}-${suffix}`,
          waitSeconds: 60,
          request: { operation: "sale", serial_number: serial, amount, currency: "EUR" }
        })
        expect(started.status).toBe(200)
      }
      await page.goto(`${worker.base}/console#/executions`)
      await page.locator("#f-outcome").waitFor()
      await page.selectOption("#f-outcome", "declined")
      await page.click("form.filters button[type=submit]")
      await page.waitForURL(/outcome=declined/)
      await expect
        .poll(() => page.locator(`#executions tbody tr[data-key="${key}-declined"]`).count(), {
          timeout: 30_000
        })
        .toBe(1)
      expect(await page.locator(`#executions tbody tr[data-key="${key}-approved"]`).count()).toBe(0)
      const badges = await page.locator("#executions tbody .badge").allTextContents()
      expect(badges.length).toBeGreaterThan(0)
      for (const b of badges) expect(b).toBe("declined")

      // By the amount asked, with its currency: the approved 10.50, not the declined 37.84.
      await page.goto(`${worker.base}/console#/executions`)
      await page.locator("#f-amount").waitFor()
      await page.fill("#f-amount", "10.50")
      await page.fill("#f-currency", "EUR")
      await page.click("form.filters button[type=submit]")
      await page.waitForURL(/amount=10\.50/)
      await expect
        .poll(() => page.locator(`#executions tbody tr[data-key="${key}-approved"]`).count(), {
          timeout: 30_000
        })
        .toBe(1)
      expect(await page.locator(`#executions tbody tr[data-key="${key}-declined"]`).count()).toBe(0)
    }, 120_000)

    it("writes every time with its zone: UTC, or the viewer's zone once chosen", async () => {
      await page.goto(`${worker.base}/console#/executions?workflow=Seeded`)
      await page.locator("#executions tbody tr").first().waitFor()
      const cell = () => page.locator("#executions tbody tr td").first().textContent()
      expect(await cell()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/)
      const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)
      expect(zone).toBe("America/New_York")
      const utc = (await cell()) ?? ""
      await page.selectOption("#zone", "local")
      await expect.poll(cell).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} America\/New_York$/)
      // The same instant, 5 hours earlier on the clock (New York in November is UTC-5).
      const local = (await cell()) ?? ""
      const clock = (text: string) => Date.parse(`${text.slice(0, 19).replace(" ", "T")}Z`)
      expect(clock(utc) - clock(local)).toBe(5 * 3600 * 1000)
      await page.selectOption("#zone", "UTC")
      await expect.poll(cell).toMatch(/ UTC$/)
    }, 60_000)
  }
)
