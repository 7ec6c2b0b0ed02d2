/**
 * Every command family run as an operator runs it: the `tillflow` executable against a
 * running worker (its built-in simulator), read through its exit code, its lines and its
 * `--json` document: terminal operations, pre-authorizations, MOTO, tips, tokens, batches,
 * the status endpoint, devices and device commands, executions, the event log and the audit.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Bin from "./support/Bin.js"
import * as Worker from "./support/Worker.js"

const buildDir = Bin.testBuildDir()
let worker: Worker.TestWorker
const serial = "0404090209"

beforeAll(async () => {
  worker = await Worker.start(buildDir)
}, 240_000)

afterAll(async () => {
  await worker?.stop()
  Fs.rmSync(buildDir, { recursive: true, force: true })
}, 60_000)

type Doc = Record<string, unknown>

/** Runs a command with `--json`: its exit code and its document. */
const json = async (args: ReadonlyArray<string>) => {
  const run = await worker.cli([...args, "--json"])
  let doc: Doc = {}
  try {
    doc = JSON.parse(run.stdout) as Doc
  } catch {
    expect.fail(
      `tillflow ${args.join(" ")} --json printed no JSON (exit ${run.status}):\n${run.stdout}\n${run.stderr}`
    )
  }
  return { status: run.status, doc, stdout: run.stdout, stderr: run.stderr }
}

const sale = async (amount: string, extra: ReadonlyArray<string> = []) => {
  const run = await json(["sale", "--serial", serial, "--amount", amount, ...extra])
  expect(run.status, run.stderr).toBe(0)
  return run.doc
}

describe("tillflow against a worker: payments", () => {
  it("sale: approved is exit 0 with one amount form and no Effect encoding; declined is exit 3 and status declined", async () => {
    const approved = await json(["sale", "--serial", serial, "--amount", "10.50"])
    expect(approved.status, approved.stderr).toBe(0)
    expect(approved.doc["status"]).toBe("approved")
    expect(approved.doc["amount"]).toEqual({ amount: "10.50", currency: "EUR" })
    expect(approved.stdout).not.toContain('"_id"')
    // The terminal's facts in the same form: 10.50, never 1050.
    const facts = (approved.doc["result"] as Doc)["facts"] as Doc
    expect(facts["totalAmount"]).toEqual({ amount: "10.50", currency: "EUR" })
    expect(approved.doc["transactionId"]).toMatch(/^[0-9a-f-]{36}$/)
    // Through a worker, which one it is is said only with --verbose.
    expect(approved.stderr).not.toContain("running against")

    const declined = await json(["sale", "--serial", serial, "--amount", "37.84"])
    expect(declined.status).toBe(3)
    expect(declined.doc["status"]).toBe("declined")
    expect(declined.doc["execution"]).toBe("completed")

    const verbose = await worker.cli(["sale", "--serial", serial, "--amount", "1.00", "--verbose"])
    expect(verbose.status).toBe(0)
    expect(verbose.stderr).toContain(`running against the worker at ${worker.url}`)
  }, 240_000)

  it("refund and reversal: linked refund, terminal reversal with --amount, terminal-less reversal in full", async () => {
    const original = await sale("20.00")
    const guid = String(original["transactionId"])
    const refund = await json([
      "refund",
      "--serial",
      serial,
      "--amount",
      "5.00",
      "--original-transaction-id",
      guid
    ])
    expect(refund.status, refund.stderr).toBe(0)
    expect(refund.doc["status"]).toBe("approved")

    const second = String((await sale("7.00"))["transactionId"])
    const onTerminal = await json([
      "reverse",
      "--serial",
      serial,
      "--original-transaction-id",
      second,
      "--amount",
      "7.00"
    ])
    expect(onTerminal.status, onTerminal.stderr).toBe(0)

    const third = String((await sale("8.00"))["transactionId"])
    const terminalLess = await json(["reverse", "--original-transaction-id", third])
    expect(terminalLess.status, terminalLess.stderr).toBe(0)
    expect(terminalLess.doc["status"]).toBe("approved")
    expect((terminalLess.doc["result"] as Doc)["amount"]).toEqual({ amount: "8.00", currency: "EUR" })
  }, 240_000)

  it("reverse --serial without --amount names the flag and says when it is required (exit 2, nothing started)", async () => {
    const run = await worker.cli([
      "reverse",
      "--serial",
      serial,
      "--original-transaction-id",
      "578ad974-5fa2-1705-bffc-0bb60949358e"
    ])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("--amount is required with --serial")
    expect(run.stderr).toContain("Without --serial the reversal is terminal-less and --amount is optional")
    expect(run.stderr).not.toContain("started execution")
  }, 120_000)

  it("preauth: open on a terminal, increase with a tip, capture, and a reversal of another hold, terminal-less", async () => {
    const open = await json(["preauth", "open", "--serial", serial, "--amount", "100.00"])
    expect(open.status, open.stderr).toBe(0)
    const hold = String(open.doc["transactionId"])
    const increase = await json([
      "preauth",
      "increase",
      "--original-transaction-id",
      hold,
      "--amount",
      "20.00",
      "--tip",
      "2.00"
    ])
    expect(increase.status, increase.stderr).toBe(0)
    const capture = await json([
      "preauth",
      "capture",
      "--original-transaction-id",
      hold,
      "--amount",
      "110.00"
    ])
    expect(capture.status, capture.stderr).toBe(0)
    expect(capture.doc["status"]).toBe("approved")

    const other = await json(["preauth", "open", "--serial", serial, "--amount", "30.00"])
    const release = await json([
      "preauth",
      "reverse",
      "--original-transaction-id",
      String(other.doc["transactionId"])
    ])
    expect(release.status, release.stderr).toBe(0)

    const tipOnTerminal = await worker.cli([
      "preauth",
      "increase",
      "--serial",
      serial,
      "--original-transaction-id",
      hold,
      "--amount",
      "1.00",
      "--tip",
      "1.00"
    ])
    expect(tipOnTerminal.status).toBe(2)
    expect(tipOnTerminal.stderr).toContain("--tip is for the terminal-less increase")
  }, 240_000)

  it("moto: sale and pre-authorization keyed on a terminal, refund and reversal terminal-less", async () => {
    const motoSale = await json(["moto", "sale", "--serial", serial, "--amount", "25.00"])
    expect(motoSale.status, motoSale.stderr).toBe(0)
    const guid = String(motoSale.doc["transactionId"])
    const refund = await json(["moto", "refund", "--original-transaction-id", guid, "--amount", "5.00"])
    expect(refund.status, refund.stderr).toBe(0)
    const second = await json(["moto", "sale", "--serial", serial, "--amount", "9.00"])
    const reverse = await json([
      "moto",
      "reverse",
      "--original-transaction-id",
      String(second.doc["transactionId"])
    ])
    expect(reverse.status, reverse.stderr).toBe(0)
    const preauth = await json(["moto", "preauth", "--serial", serial, "--amount", "80.00"])
    expect(preauth.status, preauth.stderr).toBe(0)
    expect(preauth.doc["operation"]).toBe("moToPreAuthorization")
  }, 240_000)

  it("tip-adjust, tokenize and the deferred token of a sale", async () => {
    const guid = String((await sale("30.00"))["transactionId"])
    const tip = await json(["tip-adjust", "--original-transaction-id", guid, "--tip", "2.50"])
    expect(tip.status, tip.stderr).toBe(0)
    const tokenize = await json(["tokenize", "--serial", serial])
    expect(tokenize.status, tokenize.stderr).toBe(0)
    const token = await json(["token", "--original-transaction-id", guid])
    expect(token.status, token.stderr).toBe(0)
  }, 240_000)

  it("the optional spec fields given as flags reach the request: customerReference and billing", async () => {
    const done = await sale("3.00", ["--customer-reference", "order-42", "--billing-zip-code", "28001"])
    const history = await worker.cli([
      "executions",
      "show",
      String(done["executionId"]),
      "--history",
      "--json"
    ])
    expect(history.status, history.stderr).toBe(0)
    expect(history.stdout).toContain('"customerReference": "order-42"')
    expect(history.stdout).toContain('"zipCode": "28001"')
    const moto = await json([
      "moto",
      "sale",
      "--serial",
      serial,
      "--amount",
      "4.00",
      "--billing-zip-code",
      "08001"
    ])
    expect(moto.status, moto.stderr).toBe(0)
    const motoHistory = await worker.cli([
      "executions",
      "show",
      String(moto.doc["executionId"]),
      "--history",
      "--json"
    ])
    expect(motoHistory.stdout).toContain('"zipCode": "08001"')
  }, 240_000)

  it("ping and print show no card number and no guid for later operations", async () => {
    const ping = await worker.cli(["ping", "--serial", serial])
    expect(ping.status, ping.stderr).toBe(0)
    expect(ping.stdout).toContain("PROCESSED")
    expect(ping.stdout).not.toMatch(/card|guid|\*{4}/)
    const print = await worker.cli(["print", "--serial", serial, "<p>thanks</p>"])
    expect(print.status, print.stderr).toBe(0)
    expect(print.stdout).not.toMatch(/card|guid|\*{4}/)
    const printJson = await json(["print", "--serial", serial, "<p>thanks</p>"])
    expect(printJson.stdout).not.toMatch(/maskedCardNumber|transactionId|efttransactionID/)
  }, 240_000)
})

describe("tillflow against a worker: terminals, batches, status", () => {
  it("devices lists the terminals; a device command runs; a value out of range is refused before anything starts", async () => {
    const devices = await worker.cli(["devices"])
    expect(devices.status, devices.stderr).toBe(0)
    expect(devices.stdout).toContain(serial)
    const locale = await json(["device", "set-locale", "--serial", serial, "--locale", "en_US"])
    expect(locale.status, locale.stderr).toBe(0)

    const before = await json(["executions", "list", "--workflow", "DeviceCommand.Send"])
    const refused = await worker.cli([
      "device",
      "set-screen-brightness",
      "--serial",
      serial,
      "--min",
      "0",
      "--max",
      "300"
    ])
    expect(refused.status).toBe(2)
    expect(refused.stderr).toContain("--max 300: a brightness level is an integer from 0 to 100")
    expect(refused.stderr).not.toMatch(/└─|Encoded side/)
    const hour = await worker.cli(["device", "set-reboot-time", "--serial", serial, "--hour", "24"])
    expect(hour.status).toBe(2)
    expect(hour.stderr).toContain("--hour 24: hour is an integer from 0 to 23")
    const after = await json(["executions", "list", "--workflow", "DeviceCommand.Send"])
    expect(after.doc["total"]).toBe(before.doc["total"])
    expect((after.doc["executions"] as ReadonlyArray<unknown>).length).toBe(
      (before.doc["executions"] as ReadonlyArray<unknown>).length
    )
  }, 240_000)

  it("batch detail prints the batch's transactions; batch close closes it", async () => {
    const done = await sale("12.00")
    // The batch the sale went into, as the service's status says (a retry finds it closed).
    const status = await json(["status", String(done["transactionReference"])])
    const batch = String((status.doc as unknown as ReadonlyArray<Doc>)[0]?.["batchNumber"] ?? "1")
    const detail = await worker.cli(["batch", "detail", "--serial", serial, "--batch", batch])
    expect(detail.status, detail.stderr).toBe(0)
    expect(detail.stdout).toMatch(/type\s+amount\s+rrn\s+guid/)
    expect(detail.stdout).toMatch(/SALE\s+12\.00 EUR/)
    const close = await json(["batch", "close", "--serial", serial, "--batch", batch])
    expect(close.status, close.stdout).toBe(0)
  }, 240_000)

  it("status prints money as 10.50 EUR and the efttimestamp as the terminal's time, not UTC", async () => {
    const done = await sale("10.50")
    const status = await worker.cli(["status", String(done["transactionReference"])])
    expect(status.status, status.stderr).toBe(0)
    expect(status.stdout).toContain("10.50 EUR")
    expect(status.stdout).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{3})? terminal time/)
    expect(status.stdout).not.toMatch(/UTC|Z\b/)
    const asJson = await json(["status", String(done["transactionReference"])])
    const entry = (asJson.doc as unknown as ReadonlyArray<Doc>)[0] ?? {}
    expect(entry["totalAmount"]).toEqual({ amount: "10.50", currency: "EUR" })
  }, 240_000)
})

describe("tillflow against a worker: executions, events, audit", () => {
  it("executions list has a header and aligned columns; show prints one execution", async () => {
    const done = await sale("2.00")
    const list = await worker.cli(["executions", "list", "--limit", "5"])
    expect(list.status, list.stderr).toBe(0)
    const lines = list.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^execution\s+created \(UTC\)\s+operation\s+serial\s+amount\s+status$/)
    const column = (lines[0] ?? "").indexOf("status")
    for (const line of lines.slice(1)) expect(line.slice(column - 2, column)).toBe("  ")
    const show = await json(["executions", "show", String(done["executionId"])])
    expect(show.status).toBe(0)
    expect(show.doc["executionId"]).toBe(done["executionId"])
  }, 240_000)

  it("executions show of a declined payment is a display: exit 0, and the document still says declined", async () => {
    const declined = await json(["sale", "--serial", serial, "--amount", "37.84"])
    expect(declined.status).toBe(3)
    const show = await json(["executions", "show", String(declined.doc["executionId"])])
    expect(show.status, show.stderr).toBe(0)
    expect(show.doc["status"]).toBe("declined")
  }, 240_000)

  it("executions list --outcome declined lists declined payments only (not `succeeded` runs), a page at a time with --after", async () => {
    const approved = await sale("3.00")
    const declined = await json(["sale", "--serial", serial, "--amount", "37.84"])
    expect(declined.status).toBe(3)
    const listed = await json(["executions", "list", "--outcome", "declined", "--limit", "500"])
    expect(listed.status, listed.stderr).toBe(0)
    const docs = listed.doc["executions"] as ReadonlyArray<Doc>
    const ids = docs.map((d) => d["executionId"])
    expect(ids).toContain(declined.doc["executionId"])
    expect(ids).not.toContain(approved["executionId"])
    for (const d of docs) expect(d["status"]).toBe("declined")
    const first = await json(["executions", "list", "--limit", "1"])
    const next = first.doc["next"]
    expect(typeof next).toBe("string")
    const second = await json(["executions", "list", "--limit", "1", "--after", String(next)])
    const idOf = (doc: Doc) => (doc["executions"] as ReadonlyArray<Doc>)[0]?.["executionId"]
    expect(idOf(second.doc)).toBeDefined()
    expect(idOf(second.doc)).not.toBe(idOf(first.doc))
    const text = await worker.cli(["executions", "list", "--limit", "1"])
    expect(text.stderr).toMatch(/^1 of \d+; next page: --after \d+\.[0-9a-f]+$/m)
    // By the amount asked, with its currency: the declined 37.84, not the approved 3.00.
    const priced = await json([
      "executions",
      "list",
      "--amount",
      "37.84",
      "--currency",
      "EUR",
      "--limit",
      "500"
    ])
    expect(priced.status, priced.stderr).toBe(0)
    const pricedIds = (priced.doc["executions"] as ReadonlyArray<Doc>).map((d) => d["executionId"])
    expect(pricedIds).toContain(declined.doc["executionId"])
    expect(pricedIds).not.toContain(approved["executionId"])
  }, 240_000)

  it("--worker URL and --json are taken before the subcommand too; under --json an error is one JSON object (its tag and message)", async () => {
    const devices = await worker.cli(["--worker", worker.url, "devices"], { TILLFLOW_WORKER_URL: "" })
    expect(devices.status, devices.stderr).toBe(0)
    expect(devices.stdout).toContain(serial)
    const before = await worker.cli(["--json", "--worker", worker.url, "executions", "list", "--limit", "1"])
    expect(before.status, before.stderr).toBe(0)
    expect(Object.keys(JSON.parse(before.stdout) as Doc)).toContain("executions")
    const missing = await json(["executions", "show", "0123456789abcdef0123456789abcdef"])
    expect(missing.status).not.toBe(0)
    expect(missing.doc).toEqual({
      error: "NotFound",
      message: expect.stringContaining("0123456789abcdef0123456789abcdef")
    })
  }, 240_000)

  it("events tail --json prints NDJSON, and its help says so", async () => {
    const tail = await worker.cli(["events", "tail", "--last", "5", "--json"])
    expect(tail.status, tail.stderr).toBe(0)
    const lines = tail.stdout.trimEnd().split("\n")
    expect(lines.length).toBe(5)
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow()
    const help = await worker.cli(["events", "tail", "--help"])
    expect(help.stdout).toContain("NDJSON")
  }, 240_000)

  it("audit: verify, ledger and a payment's timeline", async () => {
    const done = await sale("6.00")
    const verify = await worker.cli(["audit", "verify"])
    expect(verify.status, verify.stdout + verify.stderr).toBe(0)
    const ledger = await worker.cli(["audit", "ledger"])
    expect(ledger.status, ledger.stderr).toBe(0)
    const timeline = await worker.cli(["audit", "timeline", String(done["executionId"])])
    expect(timeline.status, timeline.stderr).toBe(0)
    expect(timeline.stdout).toContain("6.00")
  }, 240_000)

  it("alerts: listed from the worker (none yet), state filter checked, a step on an alert not raised is NotFound", async () => {
    const list = await json(["alerts", "list"])
    expect(list.status, list.stderr).toBe(0)
    expect(list.doc).toMatchObject({ alerts: [], caughtUp: expect.any(Boolean) })
    const all = await json(["alerts", "list", "--state", "all"])
    expect(all.status, all.stderr).toBe(0)
    const human = await worker.cli(["alerts", "list"])
    expect(human.stdout.trim()).toBe("no alert")
    const missing = await json(["alerts", "ack", "mismatch.0123456789abcdef", "--reason", "on it"])
    expect(missing.status).not.toBe(0)
    expect(missing.doc).toEqual({
      error: "NotFound",
      message: expect.stringContaining("mismatch.0123456789abcdef")
    })
    const malformed = await json(["alerts", "resolve", "whatever", "--reason", "done"])
    expect(malformed.status).toBe(2)
    expect(String(malformed.doc["message"])).toContain("<kind>.<executionId>")
  }, 240_000)
})
