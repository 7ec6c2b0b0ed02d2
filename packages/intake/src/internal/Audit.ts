/**
 * The intake's audit: the ledger (replayed from the log, or the live projection's latest
 * snapshot), its entries page by page, a rebuild compared with the live ledger, the hash
 * chain and each transaction's money conservation verified, and one operation's timeline.
 *
 * A request acting for a merchant (`MerchantKeys.currentMerchant`: a merchant's credential,
 * or the platform's naming one) reads that merchant's ledger and entries only: the facts
 * whose event metadata names it as their tenant (`Ledger.ofTenant`; never the result's
 * `mid`, which is the service's). The live snapshot's rows name no tenant, so its ledger is
 * replayed; the rest spans every merchant and is the platform's (`Scope`).
 */
import { Conservation, Ledger, LedgerFold, LedgerProjection, MerchantKeys, Money } from "@tillflow/core"
import { type DurableEngine, EventStore } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Intake from "../Intake.js"
import type * as ExecutionViews from "./ExecutionViews.js"
import { unavailable } from "./Failures.js"
import { checkpointOf } from "./StoredEvents.js"
import * as Timeline from "./Timeline.js"

/** What the audit is. */
export type Audit = Pick<Intake.Service, "verify" | "ledger" | "entries" | "rebuild" | "timeline">

const ledgerView = (
  ledger: Ledger.Ledger,
  source: "replay" | "live",
  from: EventStore.Checkpoint
): Intake.LedgerView => ({
  source,
  from: Ledger.positionOf(from),
  checkpoint: Ledger.positionOf(ledger.checkpoint),
  eventsRead: ledger.eventsRead,
  entries: ledger.entries,
  undecodable: ledger.undecodable,
  rows: Ledger.summarize(ledger, ["day", "terminal", "merchant"])
})

const entryView = (e: Ledger.Entry): Intake.EntriesView["entries"][number] => ({
  position: e.position,
  at: e.at,
  day: e.day,
  kind: e.kind,
  operation: e.operation,
  finStatus: e.finStatus,
  ...(e.amount === undefined
    ? {}
    : { amount: Money.toMajorUnitsString(e.amount), currency: e.amount.currency }),
  terminal: e.terminal,
  merchant: e.merchant,
  ...(e.transactionReference === undefined ? {} : { transactionReference: e.transactionReference }),
  reconciled: e.reconciled,
  streamId: e.streamId,
  eventType: e.eventType
})

/** The audit over the engine and store in context. */
export const make = (
  views: ExecutionViews.ExecutionViews
): Effect.Effect<Audit, never, DurableEngine.DurableEngine | EventStore.EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore

    const withStore = <A, E extends { readonly message: string }>(
      effect: Effect.Effect<A, E, EventStore.EventStore>
    ) =>
      effect.pipe(
        Effect.provideService(EventStore.EventStore, store),
        Effect.mapError(unavailable("event store"))
      )

    const verify = (streamId: string | undefined) =>
      Effect.gen(function* () {
        const r = yield* store.verify(streamId).pipe(Effect.mapError(unavailable("event store")))
        const money = yield* Conservation.checkStore(store, streamId).pipe(
          Effect.mapError(unavailable("event store"))
        )
        return {
          ok: r.ok && money.broken.length === 0 && money.disagreements.length === 0,
          streamsChecked: r.streamsChecked,
          eventsChecked: r.eventsChecked,
          broken: r.broken.map((b) => ({
            streamId: b.streamId,
            version: b.version,
            kind: b.kind,
            expected: b.expected,
            found: b.found
          })),
          conservation: {
            transactionsChecked: money.transactionsChecked,
            broken: money.broken.map((b) => ({
              guid: b.guid,
              currency: b.currency,
              charged: b.charged.toString(),
              credited: b.credited.toString(),
              message: Conservation.describe(b)
            })),
            disagreements: money.disagreements.map((d) => ({
              guid: d.guid,
              version: d.version,
              eventType: d.eventType,
              what: d.what,
              stated: Money.toMajorUnitsString(d.stated),
              ...(d.folded === undefined ? {} : { folded: Money.toMajorUnitsString(d.folded) }),
              currency: d.stated.currency,
              message: Conservation.describeDisagreement(d)
            })),
            undecodable: money.undecodable
          }
        }
      })

    const ledger = (options: { readonly source: "replay" | "live"; readonly from?: string | undefined }) =>
      Effect.gen(function* () {
        const merchant = yield* MerchantKeys.currentMerchant
        if (options.source === "live" && merchant !== undefined) {
          return yield* new Intake.InvalidRequest({
            message: `source=live: the live ledger's snapshot holds every merchant's rows, not whose they are; merchant ${merchant}'s ledger is replayed from the log (source=replay, the default)`
          })
        }
        if (options.source === "live") {
          const live = yield* withStore(LedgerProjection.latest)
          if (Option.isNone(live)) {
            return yield* new Intake.NotFound({
              message: "no live ledger snapshot yet: a worker writes one a few seconds after it starts"
            })
          }
          return ledgerView(live.value, "live", EventStore.Checkpoint.start)
        }
        const from = yield* checkpointOf(options.from)
        const replayed = yield* withStore(
          LedgerProjection.replay({
            from: { ...Ledger.empty, checkpoint: from },
            only: merchant,
            settle: EventStore.reportSettle
          })
        )
        return ledgerView(replayed, "replay", from)
      })

    const entries = (fromText: string | undefined, limit: number) =>
      Effect.gen(function* () {
        const merchant = yield* MerchantKeys.currentMerchant
        let checkpoint = yield* checkpointOf(fromText)
        const out: Array<Intake.EntriesView["entries"][number]> = []
        // The transactions' histories folded so far, from page to page.
        const folds = new LedgerFold.Cache()
        let settle: EventStore.ReadAllOptions["settle"] = EventStore.reportSettle
        while (out.length < limit) {
          const page = yield* store
            .readAll(checkpoint, { maxCount: 1000, settle })
            .pipe(Effect.mapError(unavailable("event store")))
          const { entries: found } = yield* withStore(Ledger.entriesOf(page.events, folds, merchant))
          for (const e of found) out.push(entryView(e))
          checkpoint = page.next
          settle = undefined
          if (page.caughtUp) break
        }
        return { entries: out, checkpoint: Ledger.positionOf(checkpoint) }
      })

    const rebuild = Effect.gen(function* () {
      const compared = yield* withStore(LedgerProjection.compareWithLive)
      if (Option.isNone(compared)) {
        const rebuilt = yield* withStore(LedgerProjection.rebuild())
        return {
          compared: false,
          equal: false,
          checkpoint: Ledger.positionOf(rebuilt.checkpoint),
          eventsRead: rebuilt.eventsRead,
          liveDigest: "",
          rebuiltDigest: yield* Ledger.digest(rebuilt),
          differences: []
        }
      }
      const c = compared.value
      return {
        compared: true,
        equal: c.differences.length === 0,
        checkpoint: Ledger.positionOf(c.live.checkpoint),
        eventsRead: c.rebuilt.eventsRead,
        liveDigest: c.liveDigest,
        rebuiltDigest: c.rebuiltDigest,
        differences: c.differences.map((d) => ({ row: d.row, live: d.left, rebuilt: d.right }))
      }
    })

    return { verify, ledger, entries, rebuild, timeline: yield* Timeline.make(views) }
  })
