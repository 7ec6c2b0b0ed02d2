/**
 * Writes the replay corpus (`npm run replay-corpus`): recorded execution histories of the
 * payment workflows, made by a real worker (`tillflow worker`) on an embedded store in a
 * temporary directory, with the built-in simulator (fast, seed 7), driven through its
 * intake API: terminal operations of every kind (sales approved, declined, partially
 * approved, by callback and by polling; linked and unlinked refunds; tokenization, ping,
 * receipt, stop; pre-authorizations with increase and capture; MOTO on a terminal) and
 * the terminal-less lifecycles (tip adjustment, deferred tokenization, reversal, MOTO
 * sale/refund/reverse, batch close/summary/detail, device command), some of them refused
 * by the service on purpose (an outcome kind too). Once the worker has stopped, the
 * histories are exported (`ReplayKit`) to
 * `packages/intake/test/fixtures/replay-corpus.jsonl`, which `ReplayCorpus.test.ts`
 * replays against the workflows of the build. Run it again when a workflow changes on
 * purpose (and say so in the commit), never to make a replay failure go away.
 */
import { ReplayKit } from "@tillflow/engine"
import * as Stack from "@tillflow/intake/Stack"
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const out = Path.join(root, "packages/intake/test/fixtures/replay-corpus.jsonl")
const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-corpus-"))
const token = "replay-corpus-token-0123456789"

const worker = ChildProcess.spawn(
  process.execPath,
  [
    Path.join(root, "node_modules/tsx/dist/cli.mjs"),
    "--conditions=@tillflow/source",
    Path.join(root, "apps/cli/src/main.ts"),
    "worker"
  ],
  {
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== "DATABASE_URL")),
      TILLFLOW_DATA_DIR: Path.join(dataDir, "data"),
      TILLFLOW_INTAKE_PORT: "0",
      TILLFLOW_INTAKE_TOKEN: token,
      TILLFLOW_SIMULATOR_SEED: "7",
      TILLFLOW_SIMULATOR_FAST: "true",
      TILLFLOW_CONSOLE: "false"
    },
    stdio: ["ignore", "pipe", "pipe"]
  }
)

const intakeUrl = await new Promise<string>((resolve, reject) => {
  let text = ""
  // The banner (on stderr) names the intake's address; the worker's log lines go to stdout.
  const listen = (chunk: Buffer) => {
    text += chunk.toString()
    const found = /intake\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(text)
    if (found?.[1] !== undefined) resolve(found[1])
  }
  worker.stdout.on("data", listen)
  worker.stderr.on("data", listen)
  worker.on("exit", (code) => reject(new Error(`the worker exited (${code}) before it started: ${text}`)))
})
console.log(`worker at ${intakeUrl}`)

let keys = 0
/** The intake's JSON answers, read loosely: the script only picks a few fields out of them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type View = any
const call = async (method: string, path: string, body?: unknown): Promise<View> => {
  const response = await fetch(`${intakeUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  try {
    return JSON.parse(text)
  } catch {
    return { status: response.status, text }
  }
}
const operation = async (
  request: Record<string, unknown>,
  extra: Record<string, unknown> = {}
): Promise<View> => {
  const view = await call("POST", "/v1/operations", {
    idempotencyKey: `corpus-${++keys}`,
    request,
    waitSeconds: 60,
    ...extra
  })
  console.log(
    `${String(request["operation"])}: ${view.status ?? "?"} — ${view.report?.summary ?? JSON.stringify(view)}`
  )
  return view
}
const lifecycle = async (workflow: string, payload: Record<string, unknown>): Promise<View> => {
  const view = await call("POST", `/v1/lifecycle/${workflow}`, {
    payload: { requestId: `corpus-${++keys}`, ...payload },
    waitSeconds: 60
  })
  console.log(`${workflow}: ${view.status ?? "?"} — ${view.report?.summary ?? JSON.stringify(view)}`)
  return view
}

const devices: ReadonlyArray<{ serialNumber: string; terminalType: string }> = await call(
  "GET",
  "/v1/devices"
)
const [a, b] = devices
if (a === undefined || b === undefined) throw new Error(`no devices: ${JSON.stringify(devices)}`)
/** The service's guid of an operation's transaction, from its execution view. */
const guid = (view: View): string => String(view?.result?.value?.facts?.efttransactionID ?? "")
const facts = (view: View): Record<string, unknown> => view?.result?.value?.facts ?? {}
const eur = (amount: string) => ({ amount, currency: "EUR" })
const on = (device: typeof a) => ({ serial_number: device.serialNumber, terminal_type: device.terminalType })
const terminal = (device: typeof a) => ({
  serialNumber: device.serialNumber,
  terminalType: device.terminalType
})

try {
  const sale = await operation({ operation: "sale", ...on(a), ...eur("1050") })
  await operation({ operation: "sale", ...on(a), ...eur("3779") }) // declined
  await operation({ operation: "sale", ...on(a), ...eur("3757") }) // partial approval
  const polled = await operation({ operation: "sale", ...on(a), ...eur("1200") }, { delivery: "polling" })
  await operation(
    { operation: "refund", ...on(a), ...eur("500"), originalTransactionId: guid(sale) },
    { originalTransactionReference: String(facts(sale)["transactionReference"]) }
  )
  await operation({ operation: "refund", ...on(a), ...eur("300") })
  const tokenized = await operation({ operation: "tokenizeCard", ...on(b) })
  await operation({ operation: "pingDevice", ...on(b) })
  await operation({ operation: "printReceipt", ...on(b), receipt: "<p>Thank you</p>" })
  await operation({ operation: "cardPan", ...on(b) })
  const hold = await operation({ operation: "preAuthorization", ...on(b), ...eur("10000") })
  await lifecycle("PreAuthorization.Increase", { originalGuid: guid(hold), amount: eur("2000") })
  await lifecycle("PreAuthorization.Capture", { originalGuid: guid(hold), amount: eur("9500") })
  const moto = await operation({ operation: "moToSale", ...on(b), ...eur("2500") })
  await lifecycle("TipAdjustment.Adjust", { originalGuid: guid(sale), tip: eur("250") })
  await lifecycle("DeferredTokenization.Tokenize", { originalGuid: guid(sale) })
  await lifecycle("Reversal.Reverse", { originalGuid: guid(polled) })
  await lifecycle("Reversal.Reverse", { originalGuid: "00000000-0000-4000-8000-000000000000" }) // refused
  await lifecycle("Moto.Reverse", { originalGuid: guid(moto) })
  const motoSale = await lifecycle("Moto.Sale", {
    cardToken: String(facts(tokenized)["cardToken"]),
    amount: eur("4000")
  })
  const motoGuid = String(
    motoSale?.result?.value?.guid ?? motoSale?.result?.value?.facts?.efttransactionID ?? ""
  )
  await lifecycle("Moto.Refund", { originalGuid: motoGuid, amount: eur("1000") })
  await lifecycle("Moto.Reverse", { originalGuid: motoGuid })
  await lifecycle("Moto.Sale", { cardToken: "unknown-token", amount: eur("1500") }) // refused
  await lifecycle("DeviceCommand.Send", { ...terminal(b), command: "set-locale", body: { locale: "en_US" } })
  await lifecycle("Batch.Summary", { ...terminal(a), batchNumber: "1", currency: "EUR" })
  await lifecycle("Batch.Close", { ...terminal(a), batchNumber: "1" })
  await lifecycle("Batch.Detail", { ...terminal(a), batchNumber: "1", currency: "EUR" })
  console.log(
    `stop: ${JSON.stringify(await call("POST", `/v1/terminals/${a.serialNumber}/stop`, { waitSeconds: 30 }))}`.slice(
      0,
      200
    )
  )
} finally {
  worker.kill("SIGTERM")
  await new Promise((resolve) => worker.on("exit", resolve))
}

const histories = await Effect.runPromise(
  ReplayKit.fromStore().pipe(
    Effect.provide(
      Stack.storeLayer({ _tag: "Embedded", dataDir: Path.join(dataDir, "data") }, "replay-corpus")
    ),
    Effect.scoped
  )
)
Fs.mkdirSync(Path.dirname(out), { recursive: true })
Fs.writeFileSync(out, histories.map((history) => `${ReplayKit.exportLine(history)}\n`).join(""))
const byWorkflow = new Map<string, number>()
for (const history of histories)
  byWorkflow.set(history.workflowName, (byWorkflow.get(history.workflowName) ?? 0) + 1)
console.log(`${histories.length} histories written to ${Path.relative(root, out)}:`)
for (const [name, count] of byWorkflow) console.log(`  ${name}: ${count}`)
Fs.rmSync(dataDir, { recursive: true, force: true })
