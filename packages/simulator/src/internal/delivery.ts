/**
 * Result delivery to a callback address: POST the TransactionResult with the caller's
 * token in `AUTH-TOKEN`; any 2xx confirms. On failure the terminal's recovery loop
 * retries every 5 s for the first 100 s after completion, then waits 8, 16, 32 s … (capped
 * at one hour between attempts, abandoned 24 h after completion). Deliveries after the
 * first attempt carry `recoveredTransaction: true`. The token is never logged.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import type { SimClockService } from "../SimClock.js"
import type { Delivery, Store } from "./model.js"

const FAST_PHASE_MS = 100_000
const FAST_INTERVAL_MS = 5_000
const FIRST_SLOW_MS = 8_000
const MAX_INTERVAL_MS = 3_600_000
const GIVE_UP_AFTER_MS = 86_400_000

/**
 * The first scheduled attempt strictly after `now` for a result completed at
 * `completedAt`, or undefined once the loop gives up.
 */
export const nextAttemptAt = (completedAt: number, now: number): number | undefined => {
  const elapsed = now - completedAt
  if (elapsed < FAST_PHASE_MS) {
    return completedAt + (Math.floor(elapsed / FAST_INTERVAL_MS) + 1) * FAST_INTERVAL_MS
  }
  let at = completedAt + FAST_PHASE_MS
  let interval = FIRST_SLOW_MS
  while (at <= now) {
    at += interval
    interval = Math.min(interval * 2, MAX_INTERVAL_MS)
  }
  return at - completedAt > GIVE_UP_AFTER_MS ? undefined : at
}

/** One delivery attempt: true when the receiver answered 2xx. */
const attempt = (
  client: HttpClient.HttpClient,
  store: Store,
  clock: SimClockService,
  delivery: Delivery
): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const now = clock.unsafeNow()
    delivery.attempts++
    if (store.callbackOutageUntil !== undefined && now < store.callbackOutageUntil) {
      delivery.lastError = "receiver unreachable (injected outage)"
      return false
    }
    const recovered = delivery.attempts > 1
    const body = { ...delivery.result, recoveredTransaction: recovered }
    const request = HttpClientRequest.post(delivery.url).pipe(
      HttpClientRequest.setHeader("AUTH-TOKEN", delivery.token),
      HttpClientRequest.bodyUnsafeJson(body)
    )
    const outcome = yield* client.execute(request).pipe(
      Effect.flatMap((response) => Effect.as(response.text, response.status)),
      Effect.scoped,
      Effect.timeout(Duration.seconds(10)),
      Effect.either
    )
    if (outcome._tag === "Right" && outcome.right >= 200 && outcome.right < 300) {
      delivery.delivered = true
      delivery.deliveredAt = clock.unsafeNow()
      delivery.recovered = recovered
      delivery.nextAttemptAt = undefined
      return true
    }
    delivery.lastError =
      outcome._tag === "Right"
        ? `receiver answered ${outcome.right}`
        : `receiver unreachable: ${outcome.left._tag}`
    yield* Effect.logDebug("callback delivery failed").pipe(
      Effect.annotateLogs({ url: delivery.url, attempt: delivery.attempts, error: delivery.lastError })
    )
    return false
  })

/** Runs the delivery and its recovery loop until delivered or abandoned. */
export const run = (
  client: HttpClient.HttpClient,
  store: Store,
  clock: SimClockService,
  delivery: Delivery
): Effect.Effect<void> =>
  Effect.gen(function* () {
    while (!(yield* attempt(client, store, clock, delivery))) {
      const next = nextAttemptAt(delivery.completedAt, clock.unsafeNow())
      delivery.nextAttemptAt = next
      if (next === undefined) {
        delivery.gaveUp = true
        return
      }
      const kick = Deferred.unsafeMake<void>(FiberId.none)
      delivery.kick = kick
      yield* Effect.raceFirst(clock.sleepUntil(next), Deferred.await(kick))
      delivery.kick = undefined
    }
  })

/** `startRecovery`: retry the pending deliveries of a terminal now. */
export const kickAll = (store: Store, terminalSerial: string | undefined): number => {
  let kicked = 0
  for (const delivery of store.deliveries.values()) {
    if (terminalSerial !== undefined && delivery.terminalSerial !== terminalSerial) continue
    if (delivery.kick !== undefined) {
      Deferred.unsafeDone(delivery.kick, Effect.void)
      kicked++
    }
  }
  return kicked
}
