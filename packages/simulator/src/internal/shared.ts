/**
 * The state every part of the simulated service shares: the store (replaced wholesale on
 * reset, so a part reads `shared.store` when it needs it rather than keeping it across
 * waits), the clock, the HTTP client callbacks go through, the fiber set that operations,
 * deliveries and reboots are forked into, and the idle signal `settle` waits for.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import type * as Scope from "effect/Scope"
import * as SimClock from "../SimClock.js"
import type { Options } from "./service.js"
import { defaultTimings, Store } from "./model.js"

const settledSignal = (): Deferred.Deferred<void> => {
  const signal = Deferred.unsafeMake<void>(FiberId.none)
  Deferred.unsafeDone(signal, Effect.void)
  return signal
}

/** The shared state; built once per simulator by `make`. */
export class Shared {
  store: Store
  defaultMerchantId = ""
  defaultApiKey = ""
  // Settled when the last running operation ends; replaced when one starts.
  private idle = settledSignal()

  constructor(
    private readonly options: Options,
    readonly clock: SimClock.SimClockService,
    readonly client: HttpClient.HttpClient,
    private readonly fibers: FiberSet.FiberSet<unknown, never>,
    private readonly runFork: (effect: Effect.Effect<void>) => unknown
  ) {
    this.store = this.populate()
  }

  /** The seeded start state: one merchant with its key and `options.terminals` terminals. */
  private populate(): Store {
    const store = new Store(this.options.seed)
    store.timings = { ...defaultTimings, ...this.options.timings }
    const merchant = store.addMerchant({ name: "Simulated Merchant" })
    this.defaultMerchantId = merchant.id
    this.defaultApiKey = store.addKey(merchant, "merchant", this.options.apiKey)
    const types = ["PAXA920", "PAXA80", "PAXIM30", "VERIFONEP400"]
    for (let i = 0; i < (this.options.terminals ?? 3); i++) {
      store.addTerminal(merchant, { type: types[i % types.length] })
    }
    const transactionSeed = this.options.transactionSeed
    if (transactionSeed !== undefined)
      store.ids.reseed(transactionSeed === "random" ? undefined : transactionSeed)
    return store
  }

  /** Simulated epoch milliseconds. */
  now(): number {
    return this.clock.unsafeNow()
  }

  /** Whether any terminal runs an operation. */
  running(): boolean {
    return Array.from(this.store.terminals.values()).some((t) => t.current !== undefined)
  }

  /** Runs `effect` in the background, in the fiber set a reset interrupts. */
  fork(effect: Effect.Effect<void>): void {
    void this.runFork(effect)
  }

  /** An operation has started: `settle` waits from now on. */
  operationStarted(): Effect.Effect<void> {
    return Effect.suspend(() =>
      Effect.map(Deferred.isDone(this.idle), (done) => {
        if (done) this.idle = Deferred.unsafeMake<void>(FiberId.none)
      })
    )
  }

  /** An operation has ended: `settle` returns if it was the last one. */
  operationEnded(): void {
    if (!this.running()) Deferred.unsafeDone(this.idle, Effect.void)
  }

  /** Waits until no terminal runs an operation. */
  awaitIdle(): Effect.Effect<void> {
    return Effect.suspend(() => (this.running() ? Deferred.await(this.idle) : Effect.void))
  }

  /** Back to the seeded start state: background work stopped, clock offset reset. */
  reset(): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      yield* FiberSet.clear(this.fibers)
      const baseUrl = this.store.baseUrl
      this.store = this.populate()
      this.store.baseUrl = baseUrl
      yield* this.clock.reset
      this.idle = settledSignal()
    })
  }
}

/** Builds the shared state over the clock and an HTTP client for callbacks. */
export const make = (
  options: Options
): Effect.Effect<Shared, never, SimClock.SimClock | HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function* () {
    const clock = yield* SimClock.SimClock
    const client = yield* HttpClient.HttpClient
    const fibers = yield* FiberSet.make<unknown, never>()
    const runFork = yield* FiberSet.runtime(fibers)<never>()
    return new Shared(options, clock, client, fibers, runFork)
  })
