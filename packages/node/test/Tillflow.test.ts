/**
 * The Promise API's own surface: the callback handler mounted in a host's `node:http`
 * server, terminal-less operations and their typed errors, the audit, bad input refused
 * with what is allowed, a configuration that cannot start, and `close()`.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  CaptureAlreadyDone,
  Closed,
  createTillflow,
  type Device,
  InvalidAmount,
  InvalidDeviceCommand,
  InvalidRequest,
  StartupError,
  TillflowError
} from "../src/index.js"
import { admin, type Harness, harness, recorded } from "./support.js"

const rejection = (promise: PromiseLike<unknown>): Promise<TillflowError> =>
  Promise.resolve(promise).then(
    () => {
      throw new Error("expected a rejection")
    },
    (error: TillflowError) => error
  )

describe("tf.callbackHandler in a host's node:http server", () => {
  let h: Harness
  let server: Http.Server
  const seen: Array<string> = []

  beforeAll(async () => {
    let handler: Http.RequestListener = (_req, res) => res.writeHead(503).end()
    // The host's own server: its routes, and the receiver mounted under a prefix of its choosing.
    server = Http.createServer((req, res) => {
      if (req.url?.startsWith("/hooks/tillflow/")) {
        seen.push(req.url)
        return handler(req, res)
      }
      res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as AddressInfo).port
    h = await harness({ callbacks: { baseUrl: `http://127.0.0.1:${port}/hooks/tillflow` } })
    handler = h.tf.callbackHandler
  })
  afterAll(async () => {
    await h?.release()
    await new Promise((resolve) => server?.close(resolve))
  })

  it("a sale's result comes back by callback through the mounted handler", async () => {
    const [terminal] = await h.tf.devices()
    const result = await h.tf.sale(
      { serialNumber: terminal!.serialNumber, amount: { amount: "12.34", currency: "EUR" } },
      { idempotencyKey: "callback-1" }
    )
    expect(result.outcome).toBe("approved")
    expect(result.source).toBe("callback")
    expect(seen.some((url) => url === `/hooks/tillflow/${result.attemptId}`)).toBe(true)
  })

  it("a delivery without the attempt's token is refused and records nothing", async () => {
    const port = (server.address() as AddressInfo).port
    const response = await fetch(`http://127.0.0.1:${port}/hooks/tillflow/not-an-attempt`, {
      method: "POST",
      headers: { "content-type": "application/json", "AUTH-TOKEN": "guess" },
      body: JSON.stringify({ finStatus: "AUTHORISED" })
    })
    expect([401, 403]).toContain(response.status)
  })

  it("a body a host's parser already read is refused with what to change", async () => {
    const response = await new Promise<{ status: number; body: string }>((resolve) => {
      const req = Object.assign(new Http.IncomingMessage(null as never), {
        url: "/hooks/tillflow/x",
        method: "POST",
        body: { finStatus: "AUTHORISED" }
      })
      req.push(null)
      req.resume()
      req.on("end", () => {
        const res = new Http.ServerResponse(req)
        const chunks: Array<string> = []
        res.write = ((chunk: string) => chunks.push(chunk) > 0) as never
        res.end = ((chunk?: string) => {
          if (chunk !== undefined) chunks.push(chunk)
          resolve({ status: res.statusCode, body: chunks.join("") })
          return res
        }) as never
        h.tf.callbackHandler(req, res)
      })
    })
    expect(response.status).toBe(500)
    expect(response.body).toContain("before express.json()")
  })
})

describe("operations, errors, audit and close", () => {
  let h: Harness
  let terminals: ReadonlyArray<Device>

  beforeAll(async () => {
    h = await harness()
    terminals = await h.tf.devices()
    for (const t of terminals)
      await admin(h.tf, "PATCH", `/terminals/${t.serialNumber}`, { duplicateAnswer: "continue" })
  })
  afterAll(async () => {
    await h?.release()
  })

  it("an amount with too many decimals is refused before anything starts, saying what the currency allows", async () => {
    const error = await rejection(
      h.tf.sale({ serialNumber: terminals[0]!.serialNumber, amount: { amount: "10.505", currency: "EUR" } })
    )
    expect(error).toBeInstanceOf(InvalidAmount)
    expect(error).toBeInstanceOf(InvalidRequest)
    expect(error.message).toContain("at most 2 decimals")
    const currency = await rejection(
      h.tf.sale({ serialNumber: terminals[0]!.serialNumber, amount: { amount: "10", currency: "EURO" } })
    )
    expect(currency.code).toBe("InvalidRequest")
    expect(currency.message).toContain("ISO 4217")
    const serial = await rejection(
      h.tf.sale({ serialNumber: "nope", amount: { amount: "1.00", currency: "EUR" } })
    )
    expect(serial.message).toContain("unknown terminal serial nope")
  })

  it("a pre-authorization opened on a terminal is captured once terminal-less; a second capture is CaptureAlreadyDone with the guid", async () => {
    const hold = await h.tf.preAuthorization(
      { serialNumber: terminals[1]!.serialNumber, amount: { amount: "50.00", currency: "EUR" } },
      { idempotencyKey: "hold-1" }
    )
    expect(hold.outcome).toBe("approved")
    const guid = hold.efttransactionID!
    await recorded(h.tf, hold.transactionReference!)
    const captured = await h.tf.preAuthorizationCapture(
      { originalTransactionId: guid, amount: { amount: "45.00", currency: "EUR" } },
      { idempotencyKey: "capture-1" }
    )
    expect(captured.outcome).toBe("approved")
    expect(captured["total"]).toEqual({ amount: "45.00", currency: "EUR" })
    const again = await rejection(
      h.tf.preAuthorizationCapture(
        { originalTransactionId: guid, amount: { amount: "45.00", currency: "EUR" } },
        { idempotencyKey: "capture-2" }
      )
    )
    expect(again).toBeInstanceOf(CaptureAlreadyDone)
    expect((again as CaptureAlreadyDone).originalGuid).toBe(guid)
  })

  it("with the merchant's MCC given, a pre-authorization opened on a terminal is captured through the terminal, once", async () => {
    const own = await harness({ merchantMcc: "7011" })
    try {
      const serialNumber = (await own.tf.devices())[0]!.serialNumber
      const hold = await own.tf.preAuthorization(
        { serialNumber, amount: { amount: "80.00", currency: "EUR" } },
        { idempotencyKey: "mcc-hold" }
      )
      expect(hold.outcome).toBe("approved")
      const captured = await own.tf.preAuthorizationCapture(
        {
          serialNumber,
          originalTransactionId: hold.efttransactionID!,
          amount: { amount: "80.00", currency: "EUR" }
        },
        { idempotencyKey: "mcc-capture" }
      )
      expect(captured.outcome).toBe("approved")
      const again = await rejection(
        own.tf.preAuthorizationCapture(
          {
            serialNumber,
            originalTransactionId: hold.efttransactionID!,
            amount: { amount: "80.00", currency: "EUR" }
          },
          { idempotencyKey: "mcc-capture-2" }
        )
      )
      expect(again.message).toContain("captured once only")
    } finally {
      await own.release()
    }
  })

  it("a tip is adjusted terminal-less on an approved sale, and the audit's ledger and chains account for it", async () => {
    const sale = await h.tf.sale(
      { serialNumber: terminals[2]!.serialNumber, amount: { amount: "30.00", currency: "EUR" } },
      { idempotencyKey: "tipped-sale" }
    )
    await recorded(h.tf, sale.transactionReference!)
    const tip = await h.tf.tipAdjustment(
      { originalTransactionId: sale.efttransactionID!, tip: { amount: "4.50", currency: "EUR" } },
      { idempotencyKey: "tip-1" }
    )
    expect(tip.outcome).toBe("approved")
    const verified = await h.tf.audit.verify()
    expect(verified.ok).toBe(true)
    expect(verified.eventsChecked).toBeGreaterThan(0)
    const ledger = (await h.tf.audit.ledger()) as { rows: Array<{ currency: string; net: string }> }
    const eur = ledger.rows.filter((row) => row.currency === "EUR")
    expect(eur.length).toBeGreaterThan(0)
    // Amounts in major units, never numbers.
    for (const row of eur) expect(row.net).toMatch(/^-?\d+\.\d{2}$/)
    const timeline = await h.tf.audit.timeline("tipped-sale")
    expect(timeline.executionId).toBe(sale.executionId)
  })

  it("a sale waiting for the card is stopped by stopCurrentTransaction and ends cancelled", async () => {
    const terminal = terminals[0]!
    await admin(h.tf, "PATCH", `/terminals/${terminal.serialNumber}`, { timings: { WaitingForCard: 30_000 } })
    try {
      const op = h.tf.sale(
        { serialNumber: terminal.serialNumber, amount: { amount: "15.00", currency: "EUR" } },
        { idempotencyKey: "to-stop" }
      )
      for await (const p of op.progress) if (p.phase === "waiting") break
      const stop = await h.tf.stopCurrentTransaction({ serialNumber: terminal.serialNumber })
      expect(stop.outcome).toBe("approved")
      const sale = await op
      expect(sale.outcome).toBe("cancelled")
      expect(sale.finStatus).toBe("CANCELLED")
    } finally {
      await admin(h.tf, "PATCH", `/terminals/${terminal.serialNumber}`, { timings: { WaitingForCard: 0 } })
    }
  })

  it("a terminal's batch is closed and a device command is sent, terminal-less", async () => {
    const terminal = terminals[2]!
    const closed = await h.tf.batchClose(
      { serialNumber: terminal.serialNumber, batchNumber: "1" },
      { idempotencyKey: "close-1" }
    )
    expect(closed.outcome).toBe("approved")
    const command = await h.tf.deviceCommand({
      serialNumber: terminal.serialNumber,
      command: "set-screen-brightness",
      body: { minimumBrightnessLevel: 20, maximumBrightnessLevel: 90 }
    })
    expect(command.outcome).toBe("approved")
    const bad = await rejection(
      h.tf.deviceCommand({
        serialNumber: terminal.serialNumber,
        command: "set-screen-brightness",
        body: { x: 1 }
      })
    )
    // Refused before anything is sent, by the lifecycle's rule, as its own class.
    expect(bad).toBeInstanceOf(InvalidDeviceCommand)
    expect(bad.message).toContain("set-screen-brightness refused before sending")
  })

  it("close() releases everything: the simulator stops answering and later calls reject with Closed", async () => {
    const local = await harness()
    const adminUrl = local.tf.info.simulatorAdminUrl!
    expect((await fetch(`${adminUrl}/state`)).ok).toBe(true)
    await local.release()
    await expect(fetch(`${adminUrl}/state`)).rejects.toThrow()
    const error = await rejection(local.tf.devices())
    expect(error).toBeInstanceOf(Closed)
    // Closing twice is the same close.
    await expect(local.tf.close()).resolves.toBeUndefined()
  })
})

describe("createTillflow", () => {
  it("rejects a configuration it cannot use with StartupError saying which key and what is allowed", async () => {
    const error = await rejection(
      createTillflow({ settings: { TILLFLOW_WORKER_CONCURRENCY: "0" }, readEnvironment: false })
    )
    expect(error).toBeInstanceOf(StartupError)
    expect(error.message).toContain("TILLFLOW_WORKER_CONCURRENCY must be 1 to 1000")
  })

  it("rejects a configuration file it cannot read with StartupError naming the file", async () => {
    const file = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-config-")), "tillflow.config.json")
    Fs.writeFileSync(file, "{ not json")
    process.env["TILLFLOW_CONFIG"] = file
    try {
      const error = await rejection(createTillflow())
      expect(error).toBeInstanceOf(StartupError)
      expect(error.message).toContain(file)
    } finally {
      delete process.env["TILLFLOW_CONFIG"]
      Fs.rmSync(Path.dirname(file), { recursive: true, force: true })
    }
  })
})
