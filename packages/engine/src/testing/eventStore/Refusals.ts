/**
 * What the store refuses, writing nothing of the batch: a duplicate event id, a secret
 * (the redaction guard), text columns cannot hold, data jsonb cannot round-trip.
 */
import { describe, expect } from "@effect/vitest"
import { EventStore, Redaction } from "../../index.js"
import * as Effect from "effect/Effect"
import { type EventStoreTests, freshStream, happened } from "./Streams.js"

/** Registers this concern's tests on the event store contract's shared layer. */
export const suite = (it: EventStoreTests): void => {
  describe("refusals", () => {
    it.effect("refuses an event id that is already stored, and writes nothing of the batch", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const first = freshStream("dup")
        const second = freshStream("dup")
        const eventId = globalThis.crypto.randomUUID()
        yield* store.append(first, EventStore.NoStream, [happened(1, { eventId })])
        const error = yield* Effect.flip(
          store.append(second, EventStore.NoStream, [happened(1), happened(2, { eventId })])
        )
        expect(error).toEqual(new EventStore.DuplicateEventId({ streamId: second, eventId }))
        expect(yield* store.streamVersion(second)).toBe(0)
        const inBatch = yield* Effect.flip(
          store.append(second, EventStore.NoStream, [
            happened(1, { eventId: eventId.toUpperCase() }),
            happened(2, { eventId })
          ])
        )
        expect(inBatch._tag).toBe("DuplicateEventId")
      })
    )

    it.effect(
      "refuses an event carrying a secret with SensitiveDataRefused, naming type and path, storing nothing",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const stream = freshStream("secret")
          const error = yield* Effect.flip(
            store.append(stream, EventStore.NoStream, [
              happened(1),
              { type: "CardCaptured", data: { card: { number: "4111 1111 1111 1111" } } }
            ])
          )
          expect(error).toEqual(
            new Redaction.SensitiveDataRefused({
              eventType: "CardCaptured",
              path: "data.card.number",
              rule: "CardNumber"
            })
          )
          expect(error.message).not.toContain("4111")
          const token = yield* Effect.flip(
            store.append(stream, EventStore.NoStream, [
              { type: "CallbackRegistered", data: { url: "https://x" }, metadata: { callbackToken: "tok" } }
            ])
          )
          expect(token).toMatchObject({
            _tag: "SensitiveDataRefused",
            path: "metadata.callbackToken",
            rule: "Token"
          })
          expect(yield* store.streamVersion(stream)).toBe(0)
        })
    )

    it.effect(
      "refuses a stream id or type with a lone UTF-16 surrogate, which text columns cannot hold",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const stream = freshStream("surrogate")
          const badType = yield* Effect.flip(
            store.append(stream, EventStore.NoStream, [{ type: "Bad\ud800", data: {} }])
          )
          expect(badType).toMatchObject({ _tag: "InvalidEvent", path: "type" })
          const badStream = yield* Effect.flip(
            store.append(`${stream}-\udc00`, EventStore.NoStream, [{ type: "Good", data: {} }])
          )
          expect(badStream).toMatchObject({ _tag: "InvalidEvent", path: "streamId" })
          expect(yield* store.streamVersion(stream)).toBe(0)
        })
    )

    it.effect("refuses data PostgreSQL's jsonb cannot round-trip with InvalidEvent", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const stream = freshStream("invalid")
        const bigint = yield* Effect.flip(
          store.append(stream, EventStore.NoStream, [
            { type: "Bad", data: { amount: 5n } as unknown as EventStore.Json }
          ])
        )
        expect(bigint).toMatchObject({ _tag: "InvalidEvent", path: "data.amount" })
        const nul = yield* Effect.flip(
          store.append(stream, EventStore.NoStream, [{ type: "Bad", data: { s: "a\u0000" } }])
        )
        expect(nul).toMatchObject({ _tag: "InvalidEvent", path: "data.s" })
        const badId = yield* Effect.flip(
          store.append(stream, EventStore.NoStream, [happened(1, { eventId: "not-a-uuid" })])
        )
        expect(badId).toMatchObject({ _tag: "InvalidEvent", path: "eventId" })
        expect(yield* store.streamVersion(stream)).toBe(0)
      })
    )
  })
}
