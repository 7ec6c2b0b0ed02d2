/**
 * The executions page at scale in Firefox (Debian's `firefox-esr` over WebDriver BiDi, as
 * `Firefox.test.ts`), against a worker on PostgreSQL whose queue holds 10,000 executions
 * seeded beside real sales: twenty pages of 100 walked with "Older →" (each execution once,
 * newest first, the caption saying where), "← Newer" back, "Newest" home; declined payments
 * filtered by outcome (a declined sale is `declined`, an approved one not listed). The whole
 * walk over 100 pages runs in Chromium (`Paging.test.ts`). Needs PostgreSQL (`DATABASE_URL`,
 * which CI sets) and `psql`; skipped without them.
 */
import type { Page } from "puppeteer-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Firefox from "../../src/testing/Firefox.js"
import * as Scenario from "./Scenario.js"
import * as Seeded from "./Seeded.js"
import * as Worker from "./Worker.js"

const seeded = 10_000
const walked = 20

describe.skipIf(!Firefox.available() || Seeded.databaseUrl === undefined || !Seeded.psqlAvailable)(
  "the executions page at scale in Firefox",
  () => {
    let worker: Worker.Worker
    let browser: Firefox.Launched
    let page: Page
    const database = `console_paging_ff_${Date.now()}`
    const key = `paging-ff-${Date.now()}`
    let url = ""

    beforeAll(async () => {
      url = await Seeded.createDatabase(database)
      worker = await Worker.start({ DATABASE_URL: url })
      await Seeded.seedExecutions(url, seeded)
      browser = await Firefox.launch()
      page = browser.page
      await page.goto(`${worker.base}/console`)
      await page.waitForSelector("#token")
      await page.locator("#token").fill(worker.token)
      await page.click("button[type=submit]")
      await page.waitForSelector("nav")
    }, 180_000)

    afterAll(async () => {
      await browser?.close()
      await worker?.stop()
      if (url !== "") await Seeded.dropDatabase(database)
    }, 60_000)

    const rows = (): Promise<ReadonlyArray<string>> =>
      page.$$eval("#executions tbody tr", (trs) => trs.map((tr) => tr.getAttribute("data-execution") ?? ""))

    /** Waits for the next page's rows: a first row, not the one before. */
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

    const caption = () => Scenario.text(page, "#executions caption")

    it(`pages through ${walked} pages of 10,000 executions with Older, back with Newer, home with Newest`, async () => {
      await page.goto(`${worker.base}/console#/executions?workflow=Seeded`)
      await page.waitForSelector("#executions tbody tr")
      expect(await caption()).toBe("10000 executions, 1–100 shown, newest first")
      const seen: Array<string> = []
      const firsts: Array<string> = []
      for (let p = 0; p < walked; p++) {
        const ids = await rows()
        expect(ids.length).toBe(100)
        firsts.push(ids[0] ?? "")
        seen.push(...ids)
        if (p === walked - 1) break
        const before = ids[0]
        await page.locator("#page-older").click()
        await turned(before)
      }
      expect(await caption()).toBe(
        `10000 executions, ${(walked - 1) * 100 + 1}–${walked * 100} shown, newest first`
      )
      expect(new Set(seen).size).toBe(walked * 100)
      expect(seen[0]).toBe(await Seeded.seededId(url, 1))
      expect(seen[walked * 100 - 1]).toBe(await Seeded.seededId(url, walked * 100))
      const before = (await rows())[0]
      await page.locator("#page-newer").click()
      await turned(before)
      expect((await rows())[0]).toBe(firsts[walked - 2])
      await page.locator("#page-newest").click()
      await expect.poll(async () => (await rows())[0], { timeout: 20_000 }).toBe(seen[0])
    }, 240_000)

    it("filters declined payments by outcome: a declined sale is declined, an approved one is not listed", async () => {
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
      await page.waitForSelector("#f-outcome")
      await page.select("#f-outcome", "declined")
      await page.click("form.filters button[type=submit]")
      await page.waitForFunction("location.hash.includes('outcome=declined')")
      await expect
        .poll(() => Scenario.count(page, `#executions tbody tr[data-key="${key}-declined"]`), {
          timeout: 30_000
        })
        .toBe(1)
      expect(await Scenario.count(page, `#executions tbody tr[data-key="${key}-approved"]`)).toBe(0)
      const badges = await page.$$eval("#executions tbody .badge", (els) =>
        els.map((e) => e.textContent ?? "")
      )
      expect(badges.length).toBeGreaterThan(0)
      for (const b of badges) expect(b).toBe("declined")
    }, 120_000)
  }
)
