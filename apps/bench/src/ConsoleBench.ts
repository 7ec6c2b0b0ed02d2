/**
 * The web console in Chromium (Debian's `chromium`, driven by playwright-core) against a
 * worker started as `npm start` starts it, on a scratch PostgreSQL database and the
 * built-in simulator:
 *
 * - first render of the executions page with 100,000 executions stored: from navigation to
 *   the table on screen (the page's script loaded, `GET /v1/monitor/executions` answered
 *   and rendered), beside the raw baseline of that API call alone from Node;
 * - paging: "Older →" from the first page to the second on screen, beside that keyset
 *   page's API call alone;
 * - a live update: from the moment a sale's outcome event is stored (its `recordedAt`) to
 *   its row on the open executions page saying "approved" (the server-sent event, the
 *   page's refresh of the list, the DOM), beside the server-sent event's own arrival in a
 *   plain reader.
 *
 * The 100,000 executions: a few real sales run through the simulator, then their rows in
 * the execution queue copied (each copy its own id, key and time) up to 100,000; copies have
 * no event history, which the page's first screen (the newest 100) reads only for the
 * newest rows. The list reads every row of the queue, which is what grows with the store.
 */
import * as Chromium from "@tillflow/console/testing/Chromium"
import * as fs from "node:fs"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import pg from "pg"
import * as Child from "./internal/Child.js"
import type * as Measure from "./internal/Measure.js"
import { median, roundsTable } from "./internal/Measure.js"
import * as Scratch from "./internal/Scratch.js"
import type * as Section from "./internal/Section.js"

const token = "console-bench-intake-token"

const started = (message: unknown): string | undefined => {
  if (typeof message !== "object" || message === null) return undefined
  const m = message as { message?: unknown; annotations?: { intakeUrl?: unknown } }
  return JSON.stringify(m.message ?? "").includes("tillflow worker started") &&
    typeof m.annotations?.intakeUrl === "string"
    ? m.annotations.intakeUrl
    : undefined
}

const call = async (url: string, method = "GET", body?: unknown): Promise<unknown> => {
  const response = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`)
  return response.json()
}

interface Execution {
  readonly executionId: string
  readonly status: string
}

/** A sale; `minor` differs between sales (the terminal cancels the same card paying the same amount twice). */
const sale = (base: string, serial: string, key: string, minor: number) =>
  call(`${base}/v1/operations`, "POST", {
    idempotencyKey: key,
    request: { operation: "sale", serial_number: serial, amount: String(minor), currency: "EUR" },
    waitSeconds: 60
  }) as Promise<Execution>

/** Copies the queue's rows until it holds `total` executions. */
const fill = async (url: string, total: number): Promise<number> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ n: string }>("SELECT count(*) AS n FROM tillflow_executions")
    const missing = total - Number(rows[0]?.n ?? 0)
    if (missing > 0) {
      await client.query(
        `INSERT INTO tillflow_executions (execution_id, workflow_name, status, attributes, created_at, updated_at)
         SELECT md5('copy-' || g), e.workflow_name, e.status,
                e.attributes || jsonb_build_object('idempotencyKey', 'bench-copy-' || g),
                e.created_at - g * 1000, e.updated_at - g * 1000
         FROM generate_series(1, $1::int) AS g
         CROSS JOIN LATERAL (SELECT * FROM tillflow_executions ORDER BY seq LIMIT 1) AS e`,
        [missing]
      )
    }
    const after = await client.query<{ n: string }>("SELECT count(*) AS n FROM tillflow_executions")
    return Number(after.rows[0]?.n ?? 0)
  } finally {
    await client.end()
  }
}

/** Milliseconds from a sale's outcome event stored to its arrival on a plain server-sent-events reader. */
const sseReader = async (base: string) => {
  const controller = new AbortController()
  const arrivals = new Map<string, number>()
  const response = await fetch(`${base}/v1/monitor/live`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal
  })
  const reader = response.body?.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  const reading = (async () => {
    while (reader !== undefined) {
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }))
      if (chunk.done) return
      buffer += decoder.decode(chunk.value)
      let end = buffer.indexOf("\n\n")
      while (end >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const data = /^data: (.*)$/m.exec(block)?.[1]
        if (data !== undefined) {
          const event = JSON.parse(data) as { streamId: string; type: string }
          arrivals.set(`${event.streamId}/${event.type}`, Date.now())
        }
        end = buffer.indexOf("\n\n")
      }
    }
  })()
  return {
    arrival: (streamId: string, type: string) => arrivals.get(`${streamId}/${type}`),
    close: async () => {
      controller.abort()
      await reading
    }
  }
}

/** The console section. */
export const section: Section.Section = {
  name: "console",
  title: "Web console: first render and paging with 100,000 executions, live update",
  run: async (context) => {
    if (!Chromium.available()) throw new Error(`Chromium is not installed at ${Chromium.executablePath}`)
    const total = context.quick ? 2_000 : 100_000
    return Scratch.using("console", async (scratch) => {
      fs.mkdirSync(path.join(Child.root, "apps/worker/build"), { recursive: true })
      const buildDir = fs.mkdtempSync(path.join(Child.root, "apps/worker/build/bench-console-"))
      const worker = Child.start("apps/worker/bin/start.mjs", {
        tsx: false,
        label: "console-worker",
        profileDir: context.profileDir,
        unsetEnv: ["TERMINAL_CLOUD_API_KEY", "TILLFLOW_DATA_DIR"],
        env: {
          DATABASE_URL: scratch.url,
          TILLFLOW_INTAKE_PORT: "0",
          TILLFLOW_INTAKE_TOKEN: token,
          TILLFLOW_SIMULATOR_FAST: "true",
          TILLFLOW_LOG_FORMAT: "json",
          TILLFLOW_LOG_LEVEL: "info",
          TILLFLOW_WORKER_BUILD_DIR: buildDir
        }
      })
      const browser = await Chromium.launch()
      try {
        const base = await worker.next(started, 180_000)
        const devices = (await call(`${base}/v1/devices`)) as ReadonlyArray<{ serialNumber: string }>
        const serials = devices.map((d) => d.serialNumber)
        const real = context.quick ? 3 : 12
        context.log(
          `console: ${real} sales through the simulator, then the queue filled to ${total} executions`
        )
        for (let i = 0; i < real; i++)
          await sale(base, serials[i % serials.length] ?? "", `bench-real-${i}`, 1000 + i)
        const stored = await fill(scratch.url, total)

        const page = browser.context.pages()[0] ?? (await browser.context.newPage())
        await page.goto(`${base}/console`)
        await page.fill("#token", token)
        await page.click("button[type=submit]")
        await page.locator("nav").waitFor()

        const render: Array<number> = []
        const api: Array<number> = []
        for (let round = 0; round < context.rounds; round++) {
          await page.goto("about:blank")
          const t0 = performance.now()
          await page.goto(`${base}/console#/executions`)
          await page.locator("#executions tbody tr").first().waitFor({ timeout: 120_000 })
          render.push(performance.now() - t0)
          const t1 = performance.now()
          await call(`${base}/v1/monitor/executions?limit=100`)
          api.push(performance.now() - t1)
        }

        // Paging: from the first page, "Older →" until the second page (101–200) is on screen,
        // beside the same keyset page's API call alone.
        const paging: Array<number> = []
        const pagingApi: Array<number> = []
        for (let round = 0; round < context.rounds; round++) {
          await page.goto("about:blank")
          await page.goto(`${base}/console#/executions`)
          await page.locator("#page-older").waitFor({ timeout: 120_000 })
          const t0 = performance.now()
          await page.click("#page-older")
          await page.locator("#executions caption", { hasText: "101–200" }).waitFor({ timeout: 120_000 })
          paging.push(performance.now() - t0)
          const first = (await call(`${base}/v1/monitor/executions?limit=100`)) as { next?: string }
          const t1 = performance.now()
          await call(`${base}/v1/monitor/executions?limit=100&after=${encodeURIComponent(first.next ?? "")}`)
          pagingApi.push(performance.now() - t1)
        }

        // Back to the first page (the live sales appear there).
        await page.goto("about:blank")
        await page.goto(`${base}/console#/executions`)
        await page.locator("#executions tbody tr").first().waitFor({ timeout: 120_000 })

        // Live: the executions page stays open; each round's sale is watched until "approved".
        await page.evaluate(`(() => {
          window.approvedAt = {}
          new MutationObserver(() => {
            for (const row of document.querySelectorAll("#executions tbody tr[data-key]")) {
              const key = row.getAttribute("data-key")
              const badge = row.querySelector(".badge")
              if (badge !== null && badge.textContent === "approved" && window.approvedAt[key] === undefined)
                window.approvedAt[key] = Date.now()
            }
          }).observe(document.body, { subtree: true, childList: true, characterData: true })
        })()`)
        const sse = await sseReader(base)
        const onPage: Array<number> = []
        const onFeed: Array<number> = []
        for (let round = 0; round < context.rounds; round++) {
          const key = `bench-live-${round}`
          const execution = await sale(base, serials[round % serials.length] ?? "", key, 2000 + round)
          // Polled from here (the page's policy refuses the evaluated predicate of waitForFunction);
          // the time itself was taken in the page by the observer.
          let shownAt: number | undefined
          for (const until = Date.now() + 60_000; shownAt === undefined && Date.now() < until;) {
            shownAt = (await page.evaluate(`window.approvedAt[${JSON.stringify(key)}]`)) as number | undefined
            if (shownAt === undefined) await new Promise((resolve) => setTimeout(resolve, 50))
          }
          if (shownAt === undefined) throw new Error(`sale ${key} never showed approved on the page`)
          const history = (await call(`${base}/v1/executions/${execution.executionId}/history`)) as {
            business: ReadonlyArray<{ type: string; recordedAt: string; streamId: string }>
          }
          const outcome = history.business.find((e) => e.type === "PaymentAuthorised")
          if (outcome === undefined) throw new Error(`sale ${key} was not authorised`)
          const storedAt = Date.parse(outcome.recordedAt)
          onPage.push(shownAt - storedAt)
          const arrived = sse.arrival(outcome.streamId, outcome.type)
          if (arrived !== undefined) onFeed.push(arrived - storedAt)
        }
        await sse.close()

        const figures: Array<Measure.Figure> = [
          {
            section: "console",
            name: `executions page, first render (${stored} executions stored)`,
            unit: "ms",
            rounds: render,
            baseline: { name: "its API call alone (GET /v1/monitor/executions, newest 100)", rounds: api },
            note: "navigation to the table on screen, Chromium headless"
          },
          {
            section: "console",
            name: `executions page, Older → to the second page (${stored} executions stored)`,
            unit: "ms",
            rounds: paging,
            baseline: {
              name: "its API call alone (GET /v1/monitor/executions, after the first page)",
              rounds: pagingApi
            },
            note: "click to the second page's table on screen (keyset cursor), Chromium headless"
          },
          {
            section: "console",
            name: "live update: outcome event stored → row shows approved",
            unit: "ms",
            rounds: onPage,
            baseline: { name: "the server-sent event's arrival in a plain reader", rounds: onFeed },
            note: `includes the page's refresh of the list over ${stored} executions`
          }
        ]
        const details = [
          `Chromium ${browser.context.browser()?.version() ?? "?"}, ${stored} executions in the queue (${real} with their event history), ${context.rounds} rounds.`,
          `Median first render ${Math.round(median(render))} ms; median paging ${Math.round(median(paging))} ms; median live update ${Math.round(median(onPage))} ms.`,
          "",
          roundsTable(figures)
        ].join("\n")
        return { figures, details }
      } finally {
        await browser.close()
        await worker.stop()
        fs.rmSync(buildDir, { recursive: true, force: true })
      }
    })
  }
}
