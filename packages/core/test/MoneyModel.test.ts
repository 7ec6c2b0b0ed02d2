/**
 * The money model's rules as a table: one row per state and command, the rule that
 * refuses it or none. Pure: states are folded from events with `evolve`.
 */
import { describe, expect, it } from "@effect/vitest"
import { LifecycleEvent, MoneyModel, Money } from "@tillflow/core"
import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"

const eur = (minor: bigint) => Money.make(minor, "EUR")
const at = DateTime.unsafeMake("2025-03-01T10:00:00Z")
const decoded = (event: LifecycleEvent.Event) => event as unknown as LifecycleEvent.Decoded

const recorded = (kind: LifecycleEvent.TransactionKind, minor: bigint) =>
  decoded(LifecycleEvent.TransactionRecorded.make({ guid: "g-1", kind, amount: eur(minor), at }))
const refunded = (id: string, minor: bigint) =>
  decoded(LifecycleEvent.Refunded.make({ requestId: id, at, amount: eur(minor), reconciled: false }))
const reversed = (id: string, minor: bigint) =>
  decoded(
    LifecycleEvent.Reversed.make({
      requestId: id,
      at,
      target: "transaction",
      amount: eur(minor),
      reconciled: false
    })
  )

const stateOf = (...events: ReadonlyArray<LifecycleEvent.Decoded>) =>
  Option.getOrThrow(events.reduce(MoneyModel.evolve, MoneyModel.initialState))

const ruleOf = (refusal: Option.Option<MoneyModel.Refusal>): string | undefined =>
  Option.match(refusal, {
    onNone: () => undefined,
    onSome: (r) => ("rule" in r ? r.rule : (/^rule ([a-z-]+)/.exec(r.message)?.[1] ?? r._tag))
  })

const refund = (minor: bigint): MoneyModel.Command => ({
  _tag: "Refund",
  operation: "refund",
  amount: eur(minor)
})
const reverse: MoneyModel.Command = { _tag: "Reverse" }
const tip: MoneyModel.Command = { _tag: "Tip" }

describe("MoneyModel rules", () => {
  const table: ReadonlyArray<
    readonly [string, ReadonlyArray<LifecycleEvent.Decoded>, MoneyModel.Command, string | undefined]
  > = [
    ["a refund within the sale", [recorded("sale", 5000n)], refund(5000n), undefined],
    ["a refund above the sale", [recorded("sale", 5000n)], refund(5001n), "credit-not-above-charge"],
    [
      "refunds add up: 30.00 then 20.01 of 50.00",
      [recorded("sale", 5000n), refunded("r1", 3000n)],
      refund(2001n),
      "credit-not-above-charge"
    ],
    [
      "a partial reversal reduces what is left by its amount",
      [recorded("sale", 5000n), reversed("v1", 1000n)],
      refund(4001n),
      "credit-not-above-charge"
    ],
    [
      "what is left after a partial reversal can be refunded",
      [recorded("sale", 5000n), reversed("v1", 1000n)],
      refund(4000n),
      undefined
    ],
    [
      "no refund after a full reversal",
      [recorded("sale", 5000n), reversed("v1", 5000n)],
      refund(1n),
      "no-credit-after-full-reversal"
    ],
    ["no refund of a refund", [recorded("refund", 5000n)], refund(100n), "no-refund-of-refund"],
    ["no refund of a MOTO refund", [recorded("moToRefund", 5000n)], refund(100n), "no-refund-of-refund"],
    ["a reversal of a sale", [recorded("sale", 5000n)], reverse, undefined],
    [
      "a reversal after a partial refund",
      [recorded("sale", 5000n), refunded("r1", 1000n)],
      reverse,
      undefined
    ],
    [
      "no reversal after a full refund",
      [recorded("sale", 5000n), refunded("r1", 5000n)],
      reverse,
      "no-reversal-after-full-refund"
    ],
    ["a tip on an untouched sale", [recorded("sale", 5000n)], tip, undefined],
    [
      "no tip on a refunded sale",
      [recorded("sale", 5000n), refunded("r1", 100n)],
      tip,
      "tip-on-unrefunded-unreversed-sale"
    ],
    [
      "no tip on a reversed sale",
      [recorded("sale", 5000n), reversed("v1", 100n)],
      tip,
      "tip-on-unrefunded-unreversed-sale"
    ]
  ]
  it.each(table)("%s", (_name, events, command, rule) => {
    expect(ruleOf(MoneyModel.decide(command, stateOf(...events)))).toBe(rule)
  })

  it("the balance: charged, refunded, reversed and what is left add up", () => {
    const balance = MoneyModel.balanceOf(
      stateOf(recorded("sale", 5000n), refunded("r1", 1200n), reversed("v1", 800n))
    )
    expect(balance).toEqual({
      charged: eur(5000n),
      refunded: eur(1200n),
      reversed: eur(800n),
      left: eur(3000n)
    })
  })

  it("a reversal of what a partial refund left marks the sale fully credited", () => {
    const state = stateOf(recorded("sale", 5000n), refunded("r1", 1200n), reversed("v1", 3800n))
    expect(state.fullyReversedAt).toEqual(at)
    expect(MoneyModel.balanceOf(state).left).toEqual(eur(0n))
  })
})
