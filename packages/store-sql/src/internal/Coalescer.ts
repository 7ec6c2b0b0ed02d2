/**
 * Group commit (leader/follower) of one kind of statement, shared by the SQL event store's
 * appends and reads and the SQL execution queue's enqueues and transitions.
 */
import * as Effect from "effect/Effect"

/** What a waiting call is told: lead the next statement, its own answer, or go alone. */
type Signal<Res> =
  { readonly _tag: "Lead" } | { readonly _tag: "Done"; readonly value: Res } | { readonly _tag: "Alone" }

interface Waiter<Req, Res> {
  readonly request: Req
  resume: (signal: Signal<Res>) => void
}

/** The default number of statements of one kind in flight before calls are coalesced. */
export const defaultMaxInFlight = 2

/** The most calls coalesced into one statement. */
export const maxCoalesced = 256

/**
 * The `maxInFlight` option of `owner`, its default when absent. One that is not a positive
 * integer is a programming error in the composition, not a runtime condition: with no slot
 * no statement would ever be sent, so it dies at construction, naming the option.
 */
export const maxInFlightOption = (owner: string, maxInFlight: number | undefined): Effect.Effect<number> => {
  const value = maxInFlight ?? defaultMaxInFlight
  return Number.isSafeInteger(value) && value >= 1
    ? Effect.succeed(value)
    : Effect.dieMessage(
        `${owner}: maxInFlight must be a positive integer (statements in flight), got ${String(value)}`
      )
}

const leadSignal: Signal<never> = { _tag: "Lead" }
const aloneSignal: Signal<never> = { _tag: "Alone" }

/**
 * Group commit (leader/follower) of one kind of statement, for calls made outside a
 * caller's transaction. Up to `maxInFlight` statements run at once; a call that finds a
 * free slot sends its own statement at once (`one`: no added latency when idle). Otherwise
 * it waits in `pending`. When a statement finishes, its fiber frees the slot and promotes
 * the first waiting call to leader: the leader takes everything pending (up to
 * `maxCoalesced`, one call per `key`: a second call with the same key waits for the next
 * statement; a call holding several keys, as a multi-stream append does, is taken only if
 * none of them is already taken) and sends it as ONE statement (`many`, answering one value per request in
 * order), then hands each follower its own value. No fiber of its own: the fibers that
 * wait anyway do the work.
 *
 * If the whole statement fails, every call goes again ALONE through `one`, from its own
 * fiber: an error reaches only the caller it belongs to. The waits are uninterruptible
 * (every store call is): a call once queued is sent and its caller gets its outcome; a
 * leader never abandons the followers it took.
 */
export const make = <Req, Res, E>(options: {
  readonly maxInFlight: number
  readonly maxCoalesced: number
  /** The key(s) a request holds: no two requests of one statement share a key. */
  readonly key: (request: Req) => string | ReadonlyArray<string>
  readonly one: (request: Req) => Effect.Effect<Res, E>
  readonly many: (requests: ReadonlyArray<Req>) => Effect.Effect<ReadonlyArray<Res>, E>
}): ((request: Req) => Effect.Effect<Res, E>) => {
  const { key, many, maxCoalesced, maxInFlight, one } = options
  let inFlight = 0
  let pending: Array<Waiter<Req, Res>> = []

  const promote = () => {
    while (inFlight < maxInFlight && pending.length > 0) {
      inFlight++
      pending.shift()?.resume(leadSignal)
    }
  }
  const release = Effect.sync(() => {
    inFlight--
    promote()
  })

  // The pending calls the leader takes with its own: in order, one per key.
  const takeFollowers = (leader: Waiter<Req, Res>): Array<Waiter<Req, Res>> => {
    if (pending.length === 0) return [leader]
    const taken = [leader]
    const keys = new Set<string>()
    const hold = (held: string | ReadonlyArray<string>) => {
      if (typeof held === "string") keys.add(held)
      else for (const one of held) keys.add(one)
    }
    const free = (held: string | ReadonlyArray<string>) =>
      typeof held === "string" ? !keys.has(held) : held.every((one) => !keys.has(one))
    hold(key(leader.request))
    const left: Array<Waiter<Req, Res>> = []
    for (const waiter of pending) {
      const waiterKey = key(waiter.request)
      if (taken.length < maxCoalesced && free(waiterKey)) {
        hold(waiterKey)
        taken.push(waiter)
      } else left.push(waiter)
    }
    pending = left
    return taken
  }

  const lead = (leader: Waiter<Req, Res>): Effect.Effect<Res, E> => {
    const taken = takeFollowers(leader)
    if (taken.length === 1) return Effect.ensuring(one(leader.request), release)
    return Effect.flatMap(
      Effect.exit(many(taken.map((waiter) => waiter.request))),
      (exit): Effect.Effect<Res, E> => {
        inFlight--
        if (exit._tag === "Success" && exit.value.length === taken.length) {
          for (let i = 1; i < taken.length; i++) taken[i].resume({ _tag: "Done", value: exit.value[i] })
          promote()
          return Effect.succeed(exit.value[0])
        }
        for (let i = 1; i < taken.length; i++) taken[i].resume(aloneSignal)
        promote()
        return one(leader.request)
      }
    )
  }

  return (request) =>
    Effect.suspend(() => {
      if (inFlight < maxInFlight && pending.length === 0) {
        inFlight++
        return Effect.ensuring(one(request), release)
      }
      const waiter: Waiter<Req, Res> = { request, resume: () => {} }
      return Effect.flatMap(
        Effect.async<Signal<Res>>((resume) => {
          waiter.resume = (signal) => resume(Effect.succeed(signal))
          // The statements in flight may have finished since the check above (the fiber
          // can yield in between): then no one would promote this waiter, so lead at once.
          if (inFlight < maxInFlight && pending.length === 0) {
            inFlight++
            waiter.resume(leadSignal)
          } else pending.push(waiter)
        }),
        (signal) =>
          signal._tag === "Done"
            ? Effect.succeed(signal.value)
            : signal._tag === "Lead"
              ? lead(waiter)
              : one(request)
      )
    }).pipe(Effect.uninterruptible)
}
