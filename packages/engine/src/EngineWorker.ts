/**
 * A worker of the durable engine: it claims due executions of the workflows registered in
 * its process from the `ExecutionQueue`, runs each on the engine, renews their leases by
 * heartbeat and stops a run whose lease it lost. Start as many workers, in as many
 * processes, as you like against one store: the queue hands each execution to one of them
 * at a time. With `tenantConcurrency`, it runs at most that many executions of one tenant
 * at once (counted across every worker's leases), and at most its fair part of the worker's
 * slots among the tenants with work (`ExecutionQueue.tenantShare`), so one tenant's flood
 * leaves room for the others (fair shares). Stopping a worker (closing its scope) stops claiming, lets runs in flight
 * finish for a grace period, then interrupts the rest, giving their claims back.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as DurableEngine from "./DurableEngine.js"
import * as ExecutionQueue from "./ExecutionQueue.js"

/** Options of a worker. */
export interface Options {
  /** The worker's identity in leases (default: `worker-<random UUID>`). */
  readonly workerId?: string | undefined
  /** How many executions it runs at once (default 16). */
  readonly concurrency?: number | undefined
  /**
   * Fair shares: at most this many executions of one tenant (`Tenant`) running at once,
   * counted over the running executions of every worker on the queue (the queue's
   * `tenantLimit`), whether claimed or started here; and, in its claims, while more tenants have work
   * (an execution running or due), at most `ceil(concurrency ÷ those tenants)`, at least 1
   * (`ExecutionQueue.tenantShare`): among 100 busy tenants a worker of 64 runs about one of
   * each, so a flooding tenant's work does not crowd the others' on a busy machine.
   * Executions without a tenant are not limited. Default: no limit.
   */
  readonly tenantConcurrency?: number | undefined
  /** How long a claim lasts without a heartbeat (default 30 s). */
  readonly lease?: Duration.DurationInput | undefined
  /** How often leases are renewed (default a third of the lease). */
  readonly heartbeat?: Duration.DurationInput | undefined
  /** The longest it sleeps before looking for due work again (default 1 s). */
  readonly pollInterval?: Duration.DurationInput | undefined
  /** How long a stopping worker lets runs in flight finish (default 10 s). */
  readonly shutdownTimeout?: Duration.DurationInput | undefined
}

/**
 * Starts a worker in the current scope; it runs until the scope closes. Returns its id.
 */
export const start = (
  options: Options = {}
): Effect.Effect<string, never, DurableEngine.DurableEngine | ExecutionQueue.ExecutionQueue | Scope.Scope> =>
  Effect.gen(function* () {
    const engine = yield* DurableEngine.DurableEngine
    const queue = yield* ExecutionQueue.ExecutionQueue
    const workerId = options.workerId ?? `worker-${globalThis.crypto.randomUUID()}`
    const concurrency = Math.max(1, options.concurrency ?? 16)
    const tenantLimit =
      options.tenantConcurrency === undefined ? undefined : Math.max(1, options.tenantConcurrency)
    const leaseMs = Duration.toMillis(options.lease ?? "30 seconds")
    const heartbeatMs = options.heartbeat === undefined ? leaseMs / 3 : Duration.toMillis(options.heartbeat)
    const pollMs = Duration.toMillis(options.pollInterval ?? "1 second")
    const shutdownTimeout = options.shutdownTimeout ?? "10 seconds"

    const runs = yield* FiberMap.make<string, DurableEngine.RunOutcome>()
    // Slots taken by starts in this process that run here at once (start leased), before
    // their run is in `runs`; a stopping worker takes no more.
    let reserved = 0
    let stopping = false
    const runFork = yield* FiberMap.runtime(runs)<never>()
    const runClaim = (claim: ExecutionQueue.Claim) =>
      runFork(claim.executionId, Effect.ensuring(engine.run(claim, workerId), engine.signal), {
        onlyIfMissing: true
      })

    const heartbeat = Effect.gen(function* () {
      while (true) {
        yield* Effect.sleep(Duration.millis(heartbeatMs))
        const sampled = Array.from(runs)
        if (sampled.length === 0) continue
        const held = yield* queue.heartbeat({
          workerId,
          executionIds: sampled.map(([id]) => id),
          leaseMs,
          now: yield* Clock.currentTimeMillis
        })
        for (const [id, fiber] of sampled) {
          if (held.includes(id)) continue
          // Not held any more: either the run released it meanwhile (nothing to do), or
          // its lease expired and another worker took it over: that run must stop writing.
          const info = yield* queue.get(id)
          const takenOver =
            Option.isSome(info) && info.value.status === "running" && info.value.leaseOwner !== workerId
          if (!takenOver || Option.getOrUndefined(FiberMap.unsafeGet(runs, id)) !== fiber) continue
          yield* Effect.logWarning(`Worker ${workerId} lost the lease of execution ${id}; stopping its run`)
          yield* Effect.forkDaemon(Fiber.interrupt(fiber))
        }
      }
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logError(`Heartbeat of worker ${workerId} failed`, cause)),
      Effect.forever
    )
    const heartbeatFiber = yield* Effect.forkScoped(heartbeat)

    // Executions whose start deadline passed while they waited for their concurrency key
    // leave its line, every `pollInterval`: each then runs at once and ends itself.
    const expireStarts = queue.expireStartDeadlines
    const expiryFiber =
      expireStarts === undefined
        ? undefined
        : yield* Effect.forkScoped(
            Effect.gen(function* () {
              yield* Effect.sleep(Duration.millis(pollMs))
              const moved = yield* expireStarts({ now: yield* Clock.currentTimeMillis })
              if (moved.length > 0) yield* engine.signal
            }).pipe(
              Effect.catchAllCause((cause) =>
                Effect.logError(`Worker ${workerId} could not expire start deadlines`, cause)
              ),
              Effect.forever
            )
          )

    // What a look for due work found: how many it claimed, whether the worker is now full,
    // and, when the queue answers it with the claim (`claimWithNextDue`), the earliest due
    // time after it (then a claim that took fewer than asked means nothing else is due now).
    interface Looked {
      readonly claimed: number
      readonly full: boolean
      readonly next: Option.Option<number> | undefined
    }
    const claimDue = Effect.gen(function* () {
      const names = yield* engine.workflowNames
      const free = concurrency - (yield* FiberMap.size(runs)) - reserved
      if (names.length === 0 || free <= 0) {
        return { claimed: 0, full: free <= 0, next: names.length === 0 ? Option.none() : undefined }
      }
      const options = {
        workerId,
        workflowNames: names,
        limit: free,
        leaseMs,
        now: yield* Clock.currentTimeMillis,
        tenantLimit,
        tenantSlots: concurrency
      }
      const { claims, nextDueAt } =
        queue.claimWithNextDue === undefined
          ? { claims: yield* queue.claim(options), nextDueAt: undefined }
          : yield* queue.claimWithNextDue(options)
      for (const claim of claims) runClaim(claim)
      const full = (yield* FiberMap.size(runs)) + reserved >= concurrency
      return { claimed: claims.length, full, next: nextDueAt }
    })

    // Sleeps until a signal (a run ended, work was enqueued or woken here or announced by
    // another process) or until the next due time, at most `pollInterval`. A full worker
    // need not know the next due time: it cannot claim before a run ends, which signals.
    const idle = (looked: Looked) =>
      Effect.gen(function* () {
        const names = yield* engine.workflowNames
        if (looked.full || names.length === 0) {
          return yield* Effect.raceFirst(engine.awaitSignal, Effect.sleep(Duration.millis(pollMs)))
        }
        // A due time that has passed by now is not slept on (as `nextDueAt`'s rows due but
        // not claimable, held by another worker or key, never were): rows made due since
        // the claim's `now` by an enqueue or a wake signal the workers (here at once,
        // elsewhere by NOTIFY), and claiming again at once claimed back to back for as long
        // as rows kept becoming due (measured: 4.4 claims per execution instead of 1.4). Only
        // a timer falling due in that gap waits for the poll, as it did before.
        const next = looked.next ?? (yield* queue.nextDueAt(names))
        const time = yield* Clock.currentTimeMillis
        const sleepMs =
          Option.isSome(next) && next.value > time ? Math.min(pollMs, next.value - time) : pollMs
        yield* Effect.raceFirst(engine.awaitSignal, Effect.sleep(Duration.millis(sleepMs)))
      })

    const failedLook: Looked = { claimed: 0, full: false, next: undefined }
    const loop = Effect.gen(function* () {
      while (true) {
        const looked = yield* claimDue.pipe(
          Effect.catchAllCause((cause) =>
            Effect.as(Effect.logError(`Worker ${workerId} could not claim`, cause), failedLook)
          )
        )
        // Claimed some and still has room: there may be more due right now, unless the
        // claim said how far the due work goes (it took all there was).
        if (looked.claimed > 0 && !looked.full && looked.next === undefined) continue
        yield* idle(looked).pipe(Effect.catchAllCause(() => Effect.sleep(Duration.millis(pollMs))))
      }
    })
    const loopFiber = yield* Effect.forkScoped(loop)

    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        stopping = true
        yield* Effect.logDebug(
          `Worker ${workerId} stopping with ${yield* FiberMap.size(runs)} runs in flight`
        )
        yield* Fiber.interrupt(loopFiber)
        // Finalizers run uninterruptibly: the wait must be interruptible for the timeout.
        const drained = yield* FiberMap.awaitEmpty(runs).pipe(
          Effect.interruptible,
          Effect.timeout(shutdownTimeout),
          Effect.option
        )
        if (Option.isNone(drained)) {
          yield* Effect.logWarning(`Worker ${workerId} stops: interrupting the runs still in flight`)
        }
        // Closing the map interrupts what is left; each run gives its claim back.
        yield* FiberMap.clear(runs)
        yield* Fiber.interrupt(heartbeatFiber)
        if (expiryFiber !== undefined) yield* Fiber.interrupt(expiryFiber)
        yield* Effect.logDebug(`Worker ${workerId} stopped: its runs finished or gave their claims back`)
      })
    )
    // Starts in this process run here at once while a slot is free (released first when
    // the scope closes, before the runs are drained).
    yield* engine.attachWorker({
      workerId,
      leaseMs,
      tenantLimit,
      reserve: () => {
        if (stopping || Effect.runSync(FiberMap.size(runs)) + reserved >= concurrency) return false
        reserved += 1
        return true
      },
      unreserve: () => {
        reserved -= 1
      },
      runReserved: (claim) => {
        reserved -= 1
        runClaim(claim)
      }
    })
    yield* Effect.logDebug(`Worker ${workerId} started`)
    return workerId
  })

/** A worker as a layer: starts with the layer, stops gracefully when it is released. */
export const layer = (
  options: Options = {}
): Layer.Layer<never, never, DurableEngine.DurableEngine | ExecutionQueue.ExecutionQueue> =>
  Layer.scopedDiscard(start(options))
