/**
 * An operator resolves a request left in doubt from the console, in Chromium against a real
 * worker on the built-in simulator: a terminal-less reversal of a sale whose first request
 * the simulator answers 503 without applying it, reconciled for a short budget
 * (`TILLFLOW_TERMINAL_LESS_BUDGET`) and left in doubt; ana opens its execution, says it was
 * not applied with the status endpoint's answer and a reason, and the resolution is
 * recorded on the sale's history in her name; a second one is refused with the rule.
 */
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Chromium from "../../src/testing/Chromium.js"
import * as ActionsScenario from "./ActionsScenario.js"
import { client, inCi, requireBrowser } from "./Scenario.js"
import * as Worker from "./Worker.js"

describe.skipIf(!Chromium.available() && !inCi)(
  "resolving a request in doubt in the console (Chromium)",
  () => {
    let worker: Worker.Worker
    let browser: Chromium.Launched
    let context: BrowserContext
    let page: Page
    let sale: { executionId: string; guid: string }
    let reversal: string

    beforeAll(async () => {
      requireBrowser("Chromium", Chromium.available(), Chromium.executablePath, "chromium")
      worker = await Worker.start({
        ...ActionsScenario.inDoubtSettings,
        TILLFLOW_OPERATORS: await ActionsScenario.operators()
      })
      browser = await Chromium.launch()
      context = browser.context
      page = context.pages()[0] ?? (await context.newPage())
      sale = await ActionsScenario.sale(worker)
      reversal = await ActionsScenario.reversalInDoubt(worker, sale.guid, "rev-in-doubt")
    }, 240_000)

    afterAll(async () => {
      await browser?.close()
      await worker?.stop()
    }, 60_000)

    it("ana resolves the reversal as not applied: recorded on the sale's history in her name; a second time is refused", async () => {
      await ActionsScenario.login(page, worker, "ana", "ana-secret")
      await page.goto(`${worker.base}/console#/executions/${reversal}`)
      await page.locator("#resolve-open").click()
      await page.locator("#resolve-dialog").waitFor()
      // Neither chosen: said so, nothing sent.
      await page.fill("#resolve-reason", "the acquirer's report shows no reversal")
      await page.click("#resolve-send")
      expect(await page.locator("#resolve-error").textContent()).toContain("applied or not")
      await page.check("#resolve-not-applied")
      await page.fill("#resolve-status", "NOT FOUND")
      await page.click("#resolve-send")
      await expect
        .poll(() => page.locator("#resolve-notice").textContent())
        .toContain("recorded in ana's name")
      await expect
        .poll(async () => (await ActionsScenario.timeline(worker, sale.guid)).join("\n"), { timeout: 30_000 })
        .toContain(
          "[rev-in-doubt] reversal resolved by ana as not applied: the acquirer's report shows no reversal; the status endpoint said: NOT FOUND"
        )

      await page.locator("#resolve-open").click()
      await page.check("#resolve-applied")
      await page.fill("#resolve-reason", "again")
      await page.click("#resolve-send")
      await expect.poll(() => page.locator("#resolve-error").textContent()).toContain("resolve-only-in-doubt")
    }, 120_000)

    it("ana resolves a terminal sale left unresolved as applied with the gateway's guid: booked once by the ledger, refundable within the money rules", async () => {
      const { api } = client(worker)
      const unresolved = await ActionsScenario.terminalSaleUnresolved(worker, 2750)
      // ana's session of the test before, else a new one.
      await page.goto(`${worker.base}/console`)
      await page.locator("nav, #name").first().waitFor()
      if ((await page.locator("#name").count()) > 0)
        await ActionsScenario.login(page, worker, "ana", "ana-secret")
      await page.goto(`${worker.base}/console#/executions/${unresolved.executionId}`)
      await page.locator("#resolve-open").click()
      await page.locator("#resolve-dialog").waitFor()
      await page.check("#resolve-applied")
      await page.fill("#resolve-guid", unresolved.guid)
      await page.fill("#resolve-reason", "the acquirer's report shows the sale")
      await page.click("#resolve-send")
      await expect
        .poll(() => page.locator("#resolve-done").textContent(), { timeout: 30_000 })
        .toContain(`Resolved by ana as applied: transaction ${unresolved.guid} (27.50 EUR)`)
      // Booked once by the ledger, as the sale it stands for.
      const sales = async () =>
        (
          (await (await api("GET", `${worker.base}/v1/audit/entries`)).json()) as {
            entries: ReadonlyArray<{ kind: string; amount: string; streamId: string; eventType: string }>
          }
        ).entries.filter(
          (e) => e.kind === "sale" && e.streamId === `execution-actions-${unresolved.executionId}`
        )
      await expect
        .poll(async () => (await sales()).map((e) => e.amount), { timeout: 30_000 })
        .toEqual(["27.50"])
      // Its history opened: a refund follows it, and one beyond what it charged is refused.
      const refund = async (amount: string, reason: string) =>
        api("POST", `${worker.base}/v1/transactions/${unresolved.guid}/actions`, {
          action: "refund",
          amount,
          currency: "EUR",
          reason,
          waitSeconds: 60
        })
      await expect
        .poll(async () => (await refund("10.00", "the customer returned one item")).status, {
          timeout: 30_000
        })
        .toBe(200)
      const beyond = await refund("20.00", "too much")
      expect(beyond.status).toBe(422)
      expect(((await beyond.json()) as { rule: string }).rule).toBe("refund-not-above-sale")
    }, 240_000)
  }
)

describe.skipIf(!Chromium.available() && !inCi)(
  "stopping a terminal's operation from the console (Chromium)",
  () => {
    let worker: Worker.Worker
    let browser: Chromium.Launched
    let page: Page

    beforeAll(async () => {
      requireBrowser("Chromium", Chromium.available(), Chromium.executablePath, "chromium")
      worker = await Worker.start({
        TILLFLOW_CALLBACK_FALLBACK: "1 second",
        TILLFLOW_OPERATORS: await ActionsScenario.operators()
      })
      browser = await Chromium.launch()
      page = browser.context.pages()[0] ?? (await browser.context.newPage())
    }, 240_000)

    afterAll(async () => {
      await browser?.close()
      await worker?.stop()
    }, 60_000)

    it("ana stops a sale waiting for its card: confirmed with what it stops, sent once, the sale ends cancelled", async () => {
      const { api, cardOnFirstTerminal } = client(worker)
      const serial = await cardOnFirstTerminal()
      // The terminal waits a minute for the card: the sale stays in flight.
      expect(
        (
          await api(
            "PATCH",
            `${worker.admin}/terminals/${serial}`,
            { timings: { WaitingForCard: 60_000 } },
            false
          )
        ).status
      ).toBe(200)
      const started = await api("POST", `${worker.base}/v1/operations`, {
        idempotencyKey: `stop-me-${Date.now()}`,
        request: { operation: "sale", serial_number: serial, amount: "1250", currency: "EUR" }
      })
      const { executionId } = (await started.json()) as { executionId: string }

      await ActionsScenario.login(page, worker, "ana", "ana-secret")
      await page.goto(`${worker.base}/console#/executions/${executionId}`)
      await page.locator("#stop-open").click()
      expect(await page.locator("#stop-confirm").textContent()).toBe(
        `Stop the sale of 12.50 EUR on terminal ${serial}?`
      )
      await page.fill("#stop-reason", "the customer walked away")
      await page.dblclick("#stop-send")
      await page.locator("#stop-notice a").waitFor()
      const ended = async () =>
        (
          (await (await api("GET", `${worker.base}/v1/executions/${executionId}`)).json()) as {
            report?: { verdict: string }
          }
        ).report?.verdict
      await expect.poll(ended, { timeout: 60_000 }).toBe("cancelled")
      // One stop for the double click: its key is the execution's.
      const stops = (await (
        await api("GET", `${worker.base}/v1/executions?operation=stopCurrentTransaction`)
      ).json()) as ReadonlyArray<unknown>
      expect(stops).toHaveLength(1)
      // Recorded in the stopped sale's history with ana's name and reason, once.
      await expect
        .poll(async () => (await ActionsScenario.timeline(worker, executionId)).join("\n"), {
          timeout: 30_000
        })
        .toContain(`stop of execution ${executionId} asked by operator ana: the customer walked away`)
      expect(
        (await ActionsScenario.timeline(worker, executionId)).filter((l) => l.includes("stop of execution"))
          .length
      ).toBe(1)
      // Ended: nothing left to stop.
      await expect.poll(() => page.locator("#stop-open").count(), { timeout: 30_000 }).toBe(0)
    }, 120_000)

    it("ana tries again a sale the terminal never received (offline): sent once however often clicked, approved", async () => {
      const { api, cardOnFirstTerminal } = client(worker)
      const serial = await cardOnFirstTerminal()
      const patch = (body: unknown) => api("PATCH", `${worker.admin}/terminals/${serial}`, body, false)
      expect((await patch({ online: false, timings: { WaitingForCard: 200 } })).status).toBe(200)
      const started = await api("POST", `${worker.base}/v1/operations`, {
        idempotencyKey: `retry-me-${Date.now()}`,
        deadlineSeconds: 1,
        waitSeconds: 60,
        request: { operation: "sale", serial_number: serial, amount: "1375", currency: "EUR" }
      })
      const failed = (await started.json()) as { executionId: string; report?: { verdict: string } }
      expect(failed.report?.verdict).toBe("unavailable")
      expect((await patch({ online: true })).status).toBe(200)

      await page.goto(`${worker.base}/console#/executions/${failed.executionId}`)
      await page.locator("#retry-open").click()
      expect(await page.locator("#retry-confirm").textContent()).toBe(
        `Send the sale of 13.75 EUR on terminal ${serial} again, as a new attempt with a fresh reference?`
      )
      await page.fill("#retry-reason", "the terminal is back online")
      await page.dblclick("#retry-send")
      await page.locator("#retry-notice a").waitFor()
      const retried = async () =>
        (
          (await (
            await api("GET", `${worker.base}/v1/executions?idempotencyKey=retry-${failed.executionId}`)
          ).json()) as ReadonlyArray<{ report?: { verdict: string } }>
        ).map((e) => e.report?.verdict)
      await expect.poll(retried, { timeout: 60_000 }).toEqual(["approved"])
      await expect
        .poll(async () => (await ActionsScenario.timeline(worker, failed.executionId)).join("\n"), {
          timeout: 30_000
        })
        .toContain("asked by operator ana: the terminal is back online")
    }, 120_000)
  }
)
