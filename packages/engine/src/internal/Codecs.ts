/**
 * The codecs of what the engine stores (a workflow's exit, an activity's or a durable
 * deferred's exit, a value encoded by its schema), compiled once per schema. Schemas built
 * per call have new ASTs, and Schema compiles a parser per AST: an `Activity.make` inline
 * in a workflow would compile one on every step, a `DurableDeferred.make` on every
 * delivery. `withCompiledCodecs` gives `makeUnsafe`'s engine the same coding with these.
 */
import type * as Activity from "@effect/workflow/Activity"
import type * as DurableDeferred from "@effect/workflow/DurableDeferred"
import * as Workflow from "@effect/workflow/Workflow"
import { WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import type * as WorkflowEngineModule from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Exit from "effect/Exit"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { isLiveResult } from "./LeanStep.js"

type UnknownSchema = Schema.Schema<unknown, unknown, never>

/** A schema seen as one of unknown values (the engine codes values it does not know). */
export const asSchema = (schema: Schema.Schema.All): UnknownSchema => schema as unknown as UnknownSchema

/**
 * A value cached per pair of schemas (weakly: it goes with them). Schemas built per call
 * have new ASTs, and Schema compiles a parser per AST: building them once per workflow
 * or activity schema keeps that compilation off every step and every completion.
 */
const cachePerSchemas = <A>(build: (success: UnknownSchema, failure: UnknownSchema) => A) => {
  const cache = new WeakMap<object, WeakMap<object, A>>()
  return (success: Schema.Schema.All, failure: Schema.Schema.All): A => {
    let bySuccess = cache.get(success.ast)
    if (bySuccess === undefined) {
      bySuccess = new WeakMap()
      cache.set(success.ast, bySuccess)
    }
    let value = bySuccess.get(failure.ast)
    if (value === undefined) {
      value = build(asSchema(success), asSchema(failure))
      bySuccess.set(failure.ast, value)
    }
    return value
  }
}

/** The exit of a workflow as stored: its values encoded by the workflow's schemas. */
const exitSchemaOf = cachePerSchemas((success, failure) =>
  Schema.Exit({ success, failure, defect: Schema.Defect })
)
export const workflowExitSchema = (workflow: Workflow.Any) =>
  exitSchemaOf(workflow.successSchema, workflow.errorSchema)

/**
 * The codecs of the exits of activities and durable deferreds (values encoded by their
 * schemas on one side): what `Schema.decode(activity.exitSchema)` and the like do in
 * `makeUnsafe`, with the schema built once per pair of success and error schemas instead
 * of once per `Activity.make` or `DurableDeferred.make` (a workflow making its activities
 * inline compiled a parser for a new schema on every step, a callback on every delivery).
 */
const exitCodecOf = cachePerSchemas((success, failure) => {
  const schema = Schema.ExitFromSelf({ success, failure, defect: Schema.Defect })
  return {
    decode: Schema.decode(schema),
    decodeUnknown: Schema.decodeUnknown(schema),
    encode: Schema.encode(schema)
  }
})

/** A durable deferred's exit with its values encoded by its schemas (the codec built once per pair). */
export const encodeDeferredExit = (deferred: DurableDeferred.Any, exit: Exit.Exit<unknown, unknown>) =>
  exitCodecOf(deferred.successSchema, deferred.errorSchema).encode(exit)

/** `Schema.encode(schema)`, built once per schema (it builds a function per call otherwise). */
const encoderCache = new WeakMap<object, (value: unknown) => Effect.Effect<unknown, ParseResult.ParseError>>()
export const encoderOf = (schema: Schema.Schema.All) => {
  let encode = encoderCache.get(schema.ast)
  if (encode === undefined) {
    encode = Schema.encode(asSchema(schema))
    encoderCache.set(schema.ast, encode)
  }
  return encode
}

/**
 * `Effect.orDie(parse(value))` without the effects around it when the parse was
 * synchronous: Schema's parsers return an `Either` then (an `Effect` as well), which is
 * taken apart here, once per durable step for its result and once for its exit.
 */
export const decodeOrDie = <A>(
  parse: (value: never) => Effect.Effect<A, ParseResult.ParseError>,
  value: unknown
): Effect.Effect<A> => {
  const parsed: unknown = (parse as (value: unknown) => Effect.Effect<A, ParseResult.ParseError>)(value)
  if (Either.isEither(parsed)) {
    const either = parsed as Either.Either<A, ParseResult.ParseError>
    return Either.isRight(either) ? Effect.succeed(either.right) : Effect.die(either.left)
  }
  return Effect.orDie(parsed as Effect.Effect<A, ParseResult.ParseError>)
}

/**
 * `makeUnsafe`'s own `activityExecute`, `deferredResult` and `deferredDone` code the
 * exits with `activity.exitSchema` / `deferred.exitSchema`, schemas every
 * `Activity.make` / `DurableDeferred.make` builds anew: a workflow making its activities
 * inline compiled a parser for them on every step. The same coding, with the schemas
 * built once per pair of success and error schemas (`exitCodecOf`), around the engine's
 * operations on encoded exits.
 */
export const withCompiledCodecs = (
  engine: WorkflowEngine["Type"],
  encoded: Pick<WorkflowEngineModule.Encoded, "activityExecute" | "deferredResult" | "deferredDone">
): WorkflowEngine["Type"] => ({
  ...engine,
  activityExecute: ((activity: Activity.Any, attempt: number) =>
    Effect.flatMap(
      encoded.activityExecute(activity, attempt),
      (result): Effect.Effect<Workflow.Result<unknown, unknown>> =>
        result._tag === "Suspended" || isLiveResult(result)
          ? Effect.succeed(result)
          : Effect.map(
              decodeOrDie(exitCodecOf(activity.successSchema, activity.errorSchema).decode, result.exit),
              (exit) => new Workflow.Complete({ exit })
            )
    )) as WorkflowEngine["Type"]["activityExecute"],
  deferredResult: ((deferred: DurableDeferred.Any) =>
    Effect.gen(function* () {
      const instance = yield* WorkflowInstance
      yield* Effect.annotateCurrentSpan({ executionId: instance.executionId })
      const exit = yield* encoded.deferredResult(deferred)
      if (exit === undefined) return exit
      return yield* Effect.orDie(
        exitCodecOf(deferred.successSchema, deferred.errorSchema).decodeUnknown(exit)
      )
    })) as WorkflowEngine["Type"]["deferredResult"],
  deferredDone: ((
    deferred: DurableDeferred.Any,
    opts: Parameters<WorkflowEngine["Type"]["deferredDone"]>[1]
  ) =>
    Effect.flatMap(exitCodecOf(deferred.successSchema, deferred.errorSchema).encode(opts.exit), (exit) =>
      encoded.deferredDone({
        workflowName: opts.workflowName,
        executionId: opts.executionId,
        deferredName: opts.deferredName,
        exit
      })
    )) as unknown as WorkflowEngine["Type"]["deferredDone"] // fails with a ParseError, as makeUnsafe's
})
