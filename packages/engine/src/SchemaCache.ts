/**
 * Validation compiled once. Effect's `ParseResult.validateSync(schema)` derives the type
 * side of the schema (`AST.typeAST`) and looks its parser up in a cache keyed by that AST;
 * for a schema whose fields hold a transformation (a `Schema.Class` with a `BigInt` field, a
 * `NumberFromString` …) the type side is a new AST at every call, so the lookup misses and
 * the whole parser is compiled again. A class constructor (`new Shipped({ parcel })`) and a
 * struct's `make` (what `Workflow.execute` calls on its payload) go through that path on
 * every call. The helpers here validate with a parser compiled once and skip the second
 * validation: the same checks, the same `ParseError` on a refusal.
 */
import type * as Workflow from "@effect/workflow/Workflow"
import { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { sha256 } from "./internal/sha256.js"

/** A `Schema.Class`, `TaggedClass` or `TaggedError`: its fields and its constructor. */
interface SchemaClass<Props, A> {
  readonly fields: Schema.Struct.Fields
  new (props: Props, options?: boolean): A
}

/**
 * The constructor of a schema class with its validation compiled once: `construct(Shipped)`
 * builds what `new Shipped(props)` builds (defaults merged, `_tag` set, the fields
 * validated, a `ParseError` thrown on a refusal), without compiling a parser per call.
 */
export const construct = <Props, A>(Class: SchemaClass<Props, A>): ((props: Props) => A) => {
  const fields = Schema.Struct(Class.fields)
  const validate = ParseResult.validateSync(fields)
  return (props) => new Class(validate(fields.make(props as never, true)) as Props, true)
}

/** `@effect/workflow`'s execution id: the first 16 bytes of SHA-256(`<name>-<idempotency key>`), in hex. */
export const workflowExecutionId = (name: string, idempotencyKey: string): string => {
  const digest = sha256(`${name}-${idempotencyKey}`)
  let hex = ""
  for (let i = 0; i < 16; i++) hex += (digest[i] ?? 0).toString(16).padStart(2, "0")
  return hex
}

/**
 * A workflow whose `execute` and `executionId` do what `Workflow.make`'s do — the payload
 * validated (`payloadSchema.make`), the execution id digested from the idempotency key, the
 * `<name>.execute` span — with the payload's validator compiled once and the digest
 * computed synchronously (`Workflow.make`'s goes through Web Crypto: a promise and a
 * thread-pool round trip per call). Only for workflows made without a
 * `suspendedRetrySchedule` (the engine's default applies, as it does for them).
 */
export const withCompiledCalls = <W extends Workflow.Any>(
  workflow: W,
  idempotencyKey: (payload: Schema.Schema.Type<W["payloadSchema"]>) => string
): W => {
  const schema = workflow.payloadSchema as unknown as Schema.Struct<Schema.Struct.Fields>
  const validate = ParseResult.validateSync(schema)
  const payloadOf = (fields: unknown): Schema.Schema.Type<W["payloadSchema"]> =>
    validate(schema.make(fields as never, true)) as Schema.Schema.Type<W["payloadSchema"]>
  const execute = (fields: unknown, options?: { readonly discard?: boolean | undefined }) =>
    Effect.gen(function* () {
      const payload = payloadOf(fields)
      const engine = yield* WorkflowEngine
      const executionId = workflowExecutionId(workflow.name, idempotencyKey(payload))
      yield* Effect.annotateCurrentSpan({ executionId })
      return yield* engine.execute(
        workflow as unknown as Workflow.Workflow<
          string,
          Workflow.AnyStructSchema,
          Schema.Schema.Any,
          Schema.Schema.All
        >,
        {
          executionId,
          payload: payload as object,
          discard: options?.discard === true,
          suspendedRetrySchedule: undefined
        }
      )
    }).pipe(Effect.withSpan(`${workflow.name}.execute`, { captureStackTrace: false }))
  const executionId = (fields: unknown) =>
    Effect.sync(() => workflowExecutionId(workflow.name, idempotencyKey(payloadOf(fields))))
  return { ...workflow, execute, executionId } as W
}
