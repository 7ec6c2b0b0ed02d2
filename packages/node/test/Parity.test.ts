/**
 * The Promise API behaves as the Effect API: the same scenarios run through
 * `TerminalOperations` (Effect, on the instance's own runtime) and through `tf.sale`, on the
 * same store, engine and simulated terminals, and their errors, outcomes and idempotency
 * are compared.
 */
import {
  Identifiers,
  Money,
  OperationOutcome,
  TerminalCloud,
  TerminalOperations,
  TransactionRequest
} from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DeviceBusy, TerminalUnavailable, TillflowError, type Device } from "../src/index.js"
import * as Plain from "../src/internal/Plain.js"
import { admin, eventually, type Harness, harness, runEffect } from "./support.js"

const encodeOutcome = Schema.encodeSync(OperationOutcome.Outcome)
const encodeError = Schema.encodeSync(OperationOutcome.OperationError)

/** The Effect API's sale of `minor` EUR on a terminal. */
const effectSale = (terminal: Device, minor: bigint, options: TerminalOperations.CallOptions) =>
  TerminalOperations.sale(
    {
      serialNumber: Identifiers.SerialNumber.make(terminal.serialNumber),
      terminalType: Identifiers.TerminalType.make(terminal.terminalType),
      amount: Money.make(minor, "EUR")
    },
    options
  )

/** A sale request of the spec, typed. */
const saleRequest = (terminal: Device, minor: string, transactionReference: string) =>
  Schema.decodeUnknownSync(TransactionRequest.TransactionRequest)({
    operation: "sale",
    serial_number: terminal.serialNumber,
    terminal_type: terminal.terminalType,
    amount: minor,
    currency: "EUR",
    transactionReference
  })

/** An Effect outcome as the Promise API shows it: its verdict and its facts, amounts in major units. */
const effectOutcomeAsPlain = (outcome: OperationOutcome.Outcome): Record<string, unknown> => {
  const encoded = Plain.plain(encodeOutcome(outcome)) as { _tag: string; facts: Record<string, unknown> }
  return { tag: encoded._tag, ...encoded.facts }
}

/** The facts of an outcome that do not name one attempt, one card reading or one amount. */
const business = (facts: Record<string, unknown>) => ({
  operation: facts["operation"],
  serialNumber: facts["serialNumber"],
  finStatus: facts["finStatus"],
  source: facts["source"],
  attempt: facts["attempt"],
  transactionType: facts["transactionType"]
})

describe("the Promise API and the Effect API on the same scenarios", () => {
  let h: Harness
  let terminals: ReadonlyArray<Device>

  beforeAll(async () => {
    h = await harness()
    terminals = await h.tf.devices()
    expect(terminals.length).toBeGreaterThanOrEqual(3)
    // One simulated card pays everywhere: no duplicate-payment prompt between scenarios.
    for (const t of terminals)
      await admin(h.tf, "PATCH", `/terminals/${t.serialNumber}`, { duplicateAnswer: "continue" })
  })
  afterAll(async () => {
    await h?.release()
  })

  it("a terminal busy with another system's transaction: the Effect API's TerminalUnavailable and the Promise API's DeviceBusy carry the same facts", async () => {
    const { tf } = h
    const terminal = terminals[0]!
    // Another system's sale occupies the terminal for a long while (the card never comes).
    await admin(tf, "PATCH", `/terminals/${terminal.serialNumber}`, { timings: { WaitingForCard: 60_000 } })
    const occupy = Effect.flatMap(TerminalCloud.TerminalCloud, (cloud) =>
      cloud.sendTransaction(saleRequest(terminal, "100", globalThis.crypto.randomUUID()))
    )
    expect(Exit.isSuccess(await runEffect(tf, occupy))).toBe(true)

    const viaEffect = await runEffect(
      tf,
      effectSale(terminal, 1050n, { idempotencyKey: "busy-effect", deadline: "2 seconds" })
    )
    const viaPromise = await tf
      .sale(
        { serialNumber: terminal.serialNumber, amount: { amount: "10.50", currency: "EUR" } },
        { idempotencyKey: "busy-promise", deadlineSeconds: 2 }
      )
      .then(
        () => undefined,
        (error: unknown) => error
      )
    await admin(tf, "POST", `/terminals/${terminal.serialNumber}/cancel`)

    expect(Exit.isFailure(viaEffect)).toBe(true)
    const effectError = Exit.isFailure(viaEffect) ? viaEffect.cause : undefined
    const failure =
      effectError?._tag === "Fail" ? (effectError.error as OperationOutcome.OperationError) : undefined
    expect(failure?._tag).toBe("TerminalUnavailable")
    const effectFields = encodeError(failure!) as Record<string, unknown>
    expect(effectFields["lastReason"]).toBe("DeviceBusy")

    expect(viaPromise).toBeInstanceOf(DeviceBusy)
    expect(viaPromise).toBeInstanceOf(TerminalUnavailable)
    expect(viaPromise).toBeInstanceOf(TillflowError)
    const promiseError = viaPromise as DeviceBusy
    expect(promiseError.code).toBe(effectFields["_tag"])
    // The same facts, field by field; the attempts within the deadline are at least one in each.
    const { _tag, attempts, ...facts } = effectFields
    expect(Object.keys(promiseError.fields).sort()).toEqual(Object.keys({ attempts, ...facts }).sort())
    expect({ ...promiseError.fields, attempts: undefined }).toEqual({ ...facts, attempts: undefined })
    expect(promiseError.serialNumber).toBe(terminal.serialNumber)
    expect(promiseError.lastReason).toBe("DeviceBusy")
    expect(attempts).toBeGreaterThanOrEqual(1)
    expect(promiseError.attempts).toBeGreaterThanOrEqual(1)
  })

  it("a sale whose response is dropped after the terminal took it is reconciled to the same outcome by both APIs", async () => {
    const { tf } = h
    const terminal = terminals[1]!
    const dropNextSale = () =>
      admin(tf, "POST", "/faults", { kind: "drop-response", method: "POST", path: "/transactions", times: 1 })

    await dropNextSale()
    const viaEffect = await runEffect(tf, effectSale(terminal, 2001n, { idempotencyKey: "dropped-effect" }))
    await dropNextSale()
    const viaPromise = await tf.sale(
      { serialNumber: terminal.serialNumber, amount: { amount: "20.00", currency: "EUR" } },
      { idempotencyKey: "dropped-promise" }
    )

    expect(Exit.isSuccess(viaEffect)).toBe(true)
    const effectOutcome = effectOutcomeAsPlain(
      Exit.isSuccess(viaEffect) ? viaEffect.value : (undefined as never)
    )
    expect(effectOutcome["tag"]).toBe("Approved")
    expect(viaPromise.outcome).toBe("approved")
    // Learnt through the status endpoint, not from the lost answer, in both.
    expect(effectOutcome["source"]).toBe("status")
    expect(business(viaPromise)).toEqual(business(effectOutcome))
    expect(viaPromise.reconciled).toBe(true)
    expect(viaPromise.totalAmount).toEqual({ amount: "20.00", currency: "EUR" })
    expect(effectOutcome["totalAmount"]).toEqual({ amount: "20.01", currency: "EUR" })
    // One charge each at the service.
    expect(await tf.status(viaPromise.transactionReference!, "all")).toHaveLength(1)
    expect(await tf.status(String(effectOutcome["transactionReference"]), "all")).toHaveLength(1)
  })

  it("the same idempotency key twice, through either API, is one execution and one charge", async () => {
    const { tf } = h
    const terminal = terminals[2]!
    const input = { serialNumber: terminal.serialNumber, amount: { amount: "7.25", currency: "EUR" } }

    // Effect first, then the Promise API twice, under one key.
    const viaEffect = await runEffect(tf, effectSale(terminal, 725n, { idempotencyKey: "order-7" }))
    expect(Exit.isSuccess(viaEffect) && viaEffect.value._tag).toBe("Approved")
    const first = await tf.sale(input, { idempotencyKey: "order-7" })
    const second = await tf.sale(input, { idempotencyKey: "order-7" })
    expect(Exit.isSuccess(viaEffect)).toBe(true)
    const effectOutcome = effectOutcomeAsPlain(
      Exit.isSuccess(viaEffect) ? viaEffect.value : (undefined as never)
    )
    expect(first).toEqual(second)
    expect(first.transactionReference).toBe(effectOutcome["transactionReference"])
    expect(first.attemptId).toBe(effectOutcome["attemptId"])
    // The Effect API asked again under the key joins the same execution.
    const joined = await runEffect(
      tf,
      TerminalOperations.start(saleRequest(terminal, "725", first.transactionReference!), {
        idempotencyKey: "order-7"
      })
    )
    expect(joined).toEqual(Exit.succeed(first.executionId))
    // And the Promise API reads it back by its execution id.
    expect(await tf.retrieve(first.executionId)).toEqual(first)
    expect(await tf.status(first.transactionReference!, "all")).toHaveLength(1)

    // The Promise API alone: two calls at once under a new key join one execution.
    const other = { ...input, amount: { amount: "8.25", currency: "EUR" } }
    const [a, b] = await Promise.all([
      tf.sale(other, { idempotencyKey: "order-8" }),
      tf.sale(other, { idempotencyKey: "order-8" })
    ])
    expect(a.outcome).toBe("approved")
    expect(a.executionId).toBe(b.executionId)
    expect(a.transactionReference).toBe(b.transactionReference)
    expect(await tf.status(a.transactionReference!, "all")).toHaveLength(1)
  })

  it("an operation waiting on a terminal reports its progress as an async iterator and as events, then ends", async () => {
    const { tf } = h
    const terminal = terminals[0]!
    await admin(tf, "PATCH", `/terminals/${terminal.serialNumber}`, { timings: { WaitingForCard: 1500 } })
    const op = tf.sale(
      { serialNumber: terminal.serialNumber, amount: { amount: "3.00", currency: "EUR" } },
      { idempotencyKey: "progress-1" }
    )
    const events: Array<string> = []
    op.on("progress", (p) => events.push(p.phase))
    const iterated: Array<string> = []
    for await (const p of op.progress) iterated.push(p.phase)
    const result = await op
    await admin(tf, "PATCH", `/terminals/${terminal.serialNumber}`, { timings: { WaitingForCard: 0 } })

    expect(result.outcome).toBe("approved")
    expect(await op.executionId).toBe(result.executionId)
    // The terminal kept it waiting: the iterator saw it wait for the result, and ended.
    expect(iterated).toContain("waiting")
    expect(iterated).toEqual(events)
    const view = await tf.execution(result.executionId)
    expect(view.status).toBe("succeeded")
    await eventually(async () => (await tf.audit.timeline(result.executionId)).lines.length > 0)
  })

  it("a reused key for a different request is refused with IdempotencyConflict naming the execution", async () => {
    const { tf } = h
    const terminal = terminals[1]!
    const first = await tf.sale(
      { serialNumber: terminal.serialNumber, amount: { amount: "1.00", currency: "EUR" } },
      { idempotencyKey: "order-9" }
    )
    const refused = await tf
      .sale(
        { serialNumber: terminal.serialNumber, amount: { amount: "2.00", currency: "EUR" } },
        { idempotencyKey: "order-9" }
      )
      .then(
        () => undefined,
        (error: unknown) => error as TillflowError
      )
    expect(refused?.code).toBe("IdempotencyConflict")
    expect(refused?.fields["executionId"]).toBe(first.executionId)
    expect(refused?.message).toContain("order-9")
  })
})
