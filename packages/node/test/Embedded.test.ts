/**
 * The worker's defaults: with nothing configured, an instance runs on the embedded PGlite
 * store and the built-in simulator; the store is one process's at a time, and `close()`
 * gives it back.
 */
import { WorkerConfig } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createTillflow, StartupError, type TillflowError } from "../src/index.js"
import * as TillflowOptions from "../src/TillflowOptions.js"

const load = (options: TillflowOptions.TillflowOptions) =>
  Effect.runPromise(WorkerConfig.load.pipe(Effect.withConfigProvider(TillflowOptions.provider(options))))

describe("the defaults", () => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-embedded-"))
  afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))

  it("are the worker's: the embedded store in .tillflow/data and the built-in simulator", async () => {
    const config = await load({ readEnvironment: false })
    expect(config.store).toEqual({ _tag: "Embedded", dataDir: WorkerConfig.defaultDataDir })
    expect(config.cloud._tag).toBe("Simulator")
    const configured = await load({
      readEnvironment: false,
      database: "postgres://db.example/tillflow",
      terminalCloud: { apiKey: "k", baseUrl: "https://a.example", transactionsUrl: "https://b.example" }
    })
    expect(configured.store._tag).toBe("Postgres")
    expect(configured.cloud._tag).toBe("Remote")
    // The options win over the environment; the environment fills what they leave.
    process.env["TILLFLOW_WORKER_CONCURRENCY"] = "3"
    try {
      expect((await load({})).worker.concurrency).toBe(3)
      expect((await load({ worker: { concurrency: 5 } })).worker.concurrency).toBe(5)
    } finally {
      delete process.env["TILLFLOW_WORKER_CONCURRENCY"]
    }
  })

  it("sells on the embedded store; a second instance on the same folder is refused until the first closes", async () => {
    const options = {
      database: { dataDir },
      terminalCloud: { simulator: { fast: true } },
      readEnvironment: false
    }
    const tf = await createTillflow(options)
    expect(tf.info.store).toBe("embedded")
    expect(tf.info.service).toBe("simulator")
    const [terminal] = await tf.devices()
    const sale = await tf.sale({
      serialNumber: terminal!.serialNumber,
      amount: { amount: "9.99", currency: "EUR" }
    })
    expect(sale.outcome).toBe("approved")

    const refused = await createTillflow(options).then(
      () => undefined,
      (error: TillflowError) => error
    )
    expect(refused).toBeInstanceOf(StartupError)
    expect(refused?.message).toContain("embedded store")
    await tf.close()

    // The store was given back, and keeps what was recorded.
    const again = await createTillflow(options)
    try {
      const timeline = await again.audit.timeline(sale.executionId)
      expect(timeline.lines.join("\n")).toContain("AUTHORISED")
    } finally {
      await again.close()
    }
  }, 180_000)
})
