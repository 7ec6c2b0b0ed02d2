import { describe, expect, it } from "vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { createTillflow } from "../src/index.js"

describe("smoke", () => {
  it("sells", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tf-"))
    const t0 = Date.now()
    const tf = await createTillflow({ database: { dataDir: dir }, terminalCloud: { simulator: { fast: true } }, readEnvironment: false, logLevel: "info" })
    console.log("started", Date.now() - t0, tf.info)
    const devices = await tf.devices()
    console.log(devices)
    const op = tf.sale({ serialNumber: devices[0]!.serialNumber, amount: { amount: "10.50", currency: "EUR" } }, { idempotencyKey: "k1" })
    op.on("progress", (p) => console.log("progress", p))
    const result = await op
    console.log(JSON.stringify(result, null, 1), Date.now() - t0)
    await tf.close()
  }, 60000)
})
