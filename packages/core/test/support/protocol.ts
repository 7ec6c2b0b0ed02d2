/**
 * The harness of the protocol's unit tests: the workflows on @effect/workflow's in-memory
 * engine, the memory event store, the scripted terminal cloud, and a stand-in for the
 * callback receiver that checks the token against the registered hash and resolves the
 * attempt's deferred, as the real receiver does.
 */
import {
  CallbackRegistration,
  Lifecycles,
  LinkedTerminalRules,
  PaymentProtocol,
  ProtocolSettings,
  ResultRedaction,
  TerminalCloud,
  TransactionResult
} from "@tillflow/core"
import { ScriptedTerminalCloud } from "@tillflow/core/testing"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import * as WorkflowEngineModule from "@effect/workflow/WorkflowEngine"
import { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"

/** The scripted cloud of the test. */
export class Cloud extends Context.Tag("test/Cloud")<Cloud, ScriptedTerminalCloud.Handle>() {}

/** What the stand-in receiver saw: tokens that did not match the stored hash. */
export class ReceiverLog extends Context.Tag("test/ReceiverLog")<
  ReceiverLog,
  { readonly badTokens: Array<string> }
>() {}

export const callbackBase = "https://pos.test/callbacks"

export const receive =
  (log: { readonly badTokens: Array<string> }) => (delivery: ScriptedTerminalCloud.Delivery) =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const engine = yield* WorkflowEngine
      const attemptId = delivery.callbackUrl.slice(callbackBase.length + 1)
      const [first] = yield* store.readStream(CallbackRegistration.attemptStream(attemptId))
      if (first === undefined) return yield* Effect.dieMessage(`no registration for ${attemptId}`)
      const registered = yield* CallbackRegistration.events.decode(first)
      const data = registered.data as typeof CallbackRegistration.AttemptRegistered.schema.Type
      const ok = yield* CallbackRegistration.verifyToken(delivery.token, data.tokenHash ?? "")
      if (!ok) {
        log.badTokens.push(attemptId)
        return
      }
      const sanitised = ResultRedaction.sanitise(delivery.body)
      const resultHash = yield* CallbackRegistration.resultHash(sanitised.value)
      const result = Schema.decodeUnknownSync(TransactionResult.TransactionResult)(sanitised.value)
      const receivedAt = yield* Clock.currentTimeMillis
      yield* engine.deferredDone(CallbackRegistration.resultDeferred(attemptId), {
        workflowName: data.workflowName,
        executionId: data.executionId,
        deferredName: data.deferredName,
        exit: Exit.succeed({ result, resultHash, receivedAt })
      })
    }).pipe(Effect.orDie)

/** Options of the harness. */
export interface Options {
  readonly scripts?: ReadonlyArray<ScriptedTerminalCloud.Script>
  readonly settings?: Partial<ProtocolSettings.Settings>
  /** The lifecycles' money rules on linked operations, and the lifecycle workflows, registered too. */
  readonly linkedRules?: LinkedTerminalRules.Options | undefined
  /** Terminal-less endpoints answered over the double's (which has none). */
  readonly terminalLess?: Partial<TerminalCloud.Service> | undefined
}

/** The harness as a layer (fresh per test). */
export const layer = (options: Options = {}) => {
  const log = { badTokens: [] as Array<string> }
  const cloud = Layer.scopedContext(
    Effect.map(
      ScriptedTerminalCloud.make({ scripts: options.scripts ?? [], deliver: receive(log) }),
      (handle) =>
        Context.make(Cloud, handle).pipe(
          Context.add(TerminalCloud.TerminalCloud, { ...handle.service, ...options.terminalLess }),
          Context.add(ReceiverLog, log)
        )
    )
  )
  const workflows =
    options.linkedRules === undefined
      ? PaymentProtocol.layer
      : Layer.merge(
          PaymentProtocol.layer.pipe(Layer.provide(LinkedTerminalRules.layer(options.linkedRules))),
          Lifecycles.layer
        )
  return workflows.pipe(
    Layer.provideMerge(cloud),
    Layer.provideMerge(
      ProtocolSettings.layer({ callbackBaseUrl: Option.some(callbackBase), ...options.settings })
    ),
    Layer.provideMerge(MemoryEventStore.layer()),
    Layer.provideMerge(WorkflowEngineModule.layerMemory)
  )
}

const settle = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 0)))

/**
 * Runs an effect to its end while moving the test clock forward in steps, letting the
 * real promises of the store (hashing) settle between steps. Fails the test if it does not
 * end within `max` of simulated time.
 */
export const runToEnd = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  options: { readonly step?: Duration.DurationInput; readonly max?: Duration.DurationInput } = {}
): Effect.Effect<Exit.Exit<A, E>, never, R> =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(effect)
    const step = Duration.decode(options.step ?? "1 second")
    const max = Duration.toMillis(Duration.decode(options.max ?? "1 hour"))
    let elapsed = 0
    while (true) {
      for (let i = 0; i < 4; i++) yield* settle
      const done = yield* Fiber.poll(fiber)
      if (Option.isSome(done)) return done.value
      if (elapsed > max)
        return yield* Effect.dieMessage(`did not end within ${Duration.format(Duration.millis(max))}`)
      yield* TestClock.adjust(step)
      elapsed += Duration.toMillis(step)
    }
  })

/** Moves the test clock forward by `total` in steps, settling between them. */
export const advance = (total: Duration.DurationInput, step: Duration.DurationInput = "1 second") =>
  Effect.gen(function* () {
    const steps = Math.ceil(
      Duration.toMillis(Duration.decode(total)) / Duration.toMillis(Duration.decode(step))
    )
    for (let i = 0; i < steps; i++) {
      for (let j = 0; j < 4; j++) yield* settle
      yield* TestClock.adjust(step)
    }
    for (let j = 0; j < 4; j++) yield* settle
  })

/** The types of the events of a stream, in order. */
export const typesOf = (streamId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readStream(streamId), (events) => events.map((event) => event.type))
  )

/** Every event of the store, for secret scans. */
export const everything = Effect.flatMap(EventStore.EventStore, (store) =>
  Effect.map(store.readAll(EventStore.Checkpoint.start, { maxCount: 100_000 }), (page) => page.events)
)

/** Moves the test clock forward a second at a time until `condition` holds (at most `max`). */
export const advanceUntil = (condition: () => boolean, max: Duration.DurationInput = "5 minutes") =>
  Effect.gen(function* () {
    const limit = Duration.toMillis(Duration.decode(max))
    for (let elapsed = 0; !condition(); elapsed += 1000) {
      if (elapsed > limit) return yield* Effect.dieMessage("the condition did not hold in time")
      for (let j = 0; j < 4; j++) yield* settle
      if (condition()) return
      yield* TestClock.adjust("1 second")
    }
  })
