/**
 * What the intake API's OpenAPI document shows of the bodies the intake decodes itself: a
 * terminal operation's `request` (one schema per operation, discriminated by `operation`),
 * a terminal-less workflow's `payload` (one schema per workflow) and the workflow names of
 * `{workflow}`. They are derived from the model's own schemas (the wire side of
 * `TransactionRequest`, each lifecycle workflow's payload), so the reference cannot drift
 * from what is accepted. The HTTP layer still takes these bodies as plain JSON objects: the
 * intake decodes them with the model's schemas, whose messages name the field and say what
 * is allowed, and fills in what it may (a fresh `transactionReference`, the terminal type).
 */
import { Lifecycles, Personal, TransactionRequest } from "@tillflow/core"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

/**
 * `runtime` as the HTTP layer decodes it, shown in the OpenAPI document as `documented`
 * (the surrogate annotation is how Effect's JSON Schema generator is told to describe a
 * schema by another one, as `Schema.Class` does).
 */
export const documentedAs = <A, I, R, D, DI>(
  runtime: Schema.Schema<A, I, R>,
  documented: Schema.Schema<D, DI>
): Schema.Schema<A, I, R> =>
  Schema.make<A, I, R>(AST.annotations(runtime.ast, { [AST.SurrogateAnnotationId]: documented.ast }))

/** The object under a wire schema's refinements and transformations. */
const objectOf = (ast: AST.AST): AST.TypeLiteral => {
  let at: AST.AST = ast
  while (!AST.isTypeLiteral(at)) {
    if (AST.isRefinement(at)) at = at.from
    else if (AST.isTransformation(at)) at = at.from
    else throw new Error(`expected an object schema, found ${at._tag}`)
  }
  return at
}

/** What each field of a request means, shown beside it. */
const fieldDescriptions: Readonly<Record<string, string>> = {
  operation: "the operation: one of the schemas of this union",
  serial_number: "the terminal's serial number (GET /v1/devices lists them)",
  terminal_type: "the terminal's type; looked up in the device list when absent",
  transactionReference:
    "a UUID v4 unique to this original operation, through which it is reconciled; a fresh one is used when absent",
  originalTransactionId: "the gateway's id (a guid) of the transaction this operation is linked to",
  amount: 'integer minor units as a string of digits ("1050" is 10.50 EUR); goes with currency',
  currency: "ISO 4217 code; goes with amount",
  customerReference: "the merchant's own reference, printed and returned with the result",
  metadata: "up to five free strings returned with the result",
  duplicate_check: "ask the terminal to warn when the same card pays the same amount within 5 minutes",
  requestId: "the idempotency key: the same requestId is the same operation; a fresh one is used when absent",
  originalGuid: "the gateway's id (a guid) of the transaction this operation acts on",
  serialNumber: "the terminal's serial number",
  terminalType: "the terminal's type",
  tip: "a tip in minor units: {amount, currency}",
  cardToken: "a card token from a tokenizing sale",
  batchNumber: "the terminal's batch number"
}

const describe = (name: PropertyKey, type: AST.AST): AST.AST => {
  const description = typeof name === "string" ? fieldDescriptions[name] : undefined
  return description === undefined
    ? type
    : AST.annotations(type, { [AST.DescriptionAnnotationId]: description })
}

/** An object schema rebuilt: fields left out, fields made optional, fields described. */
const reshape = (
  ast: AST.TypeLiteral,
  options: {
    readonly omit?: ReadonlyArray<string>
    readonly optional?: ReadonlyArray<string>
    readonly annotations: AST.Annotations
  }
): AST.TypeLiteral =>
  new AST.TypeLiteral(
    ast.propertySignatures
      .filter((ps) => !(options.omit ?? []).includes(String(ps.name)))
      .map(
        (ps) =>
          new AST.PropertySignature(
            ps.name,
            // A personal field is documented in its plain form: the wrapper is how it is stored.
            describe(ps.name, Personal.plainOf(ps.type) ?? ps.type),
            ps.isOptional || (options.optional ?? []).includes(String(ps.name)),
            ps.isReadonly,
            ps.annotations
          )
      ),
    ast.indexSignatures,
    options.annotations
  )

/** The wire fields of one operation's request schemas (two for the linked and unlinked refunds). */
const mergeFields = (asts: ReadonlyArray<AST.TypeLiteral>): AST.TypeLiteral => {
  if (asts.length === 1 && asts[0] !== undefined) return asts[0]
  const byName = new Map<PropertyKey, AST.PropertySignature>()
  for (const ast of asts) {
    for (const ps of ast.propertySignatures) {
      // A field some forms lack is optional in the merged form.
      const inAll = asts.every((other) => other.propertySignatures.some((o) => o.name === ps.name))
      if (!byName.has(ps.name)) {
        byName.set(
          ps.name,
          new AST.PropertySignature(ps.name, ps.type, ps.isOptional || !inAll, ps.isReadonly, ps.annotations)
        )
      }
    }
  }
  return new AST.TypeLiteral(Array.from(byName.values()), [])
}

const operationDescriptions: Readonly<Record<string, string>> = {
  refund:
    "An unlinked refund carries its own transactionReference; a refund linked to its sale carries the sale's originalTransactionId instead.",
  moToRefund:
    "An unlinked MOTO refund carries its own transactionReference; one linked to its sale carries the sale's originalTransactionId instead."
}

/** The operations the intake starts at `POST /v1/operations` (a stop has its own route). */
const operationSchemas: ReadonlyArray<readonly [string, AST.TypeLiteral]> = (() => {
  const byOperation = new Map<string, Array<AST.TypeLiteral>>()
  for (const variant of TransactionRequest.variants) {
    const wire = objectOf(AST.encodedBoundAST(variant.ast))
    const literal = wire.propertySignatures.find((ps) => ps.name === "operation")?.type
    const operation = literal !== undefined && AST.isLiteral(literal) ? String(literal.literal) : undefined
    if (operation === undefined || operation === "stopCurrentTransaction") continue
    byOperation.set(operation, [...(byOperation.get(operation) ?? []), wire])
  }
  return Array.from(byOperation.entries()).map(([operation, wires]) => [
    operation,
    reshape(mergeFields(wires), {
      omit: ["callbackUrl", "token"],
      optional: ["transactionReference", "terminal_type"],
      annotations: {
        [AST.IdentifierAnnotationId]: `OperationRequest.${operation}`,
        [AST.TitleAnnotationId]: operation,
        [AST.DescriptionAnnotationId]:
          operationDescriptions[operation] ?? `The ${operation} operation in the service's JSON form.`
      }
    })
  ])
})()

/**
 * A terminal operation in the service's JSON form, one schema per `operation`.
 * `callbackUrl` and `token` are never given: tillflow sets them for each attempt.
 */
export const OperationRequest: Schema.Schema<unknown> = Schema.make(
  AST.Union.make(
    operationSchemas.map(([, ast]) => ast),
    {
      [AST.IdentifierAnnotationId]: "OperationRequest",
      [AST.DescriptionAnnotationId]:
        "A TransactionRequest of the service, discriminated by operation. transactionReference and terminal_type may be left out; callbackUrl and token are set by tillflow for each attempt.",
      [AST.JSONSchemaAnnotationId]: {
        discriminator: {
          propertyName: "operation",
          mapping: Object.fromEntries(
            operationSchemas.map(([operation]) => [
              operation,
              `#/components/schemas/OperationRequest.${operation}`
            ])
          )
        }
      }
    }
  )
)

/** The names of the terminal-less workflows, as `{workflow}` takes them. */
export const workflowNames: ReadonlyArray<string> = Lifecycles.workflows.map((workflow) => workflow.name)

/** `{workflow}`: one of the terminal-less workflows. */
export const WorkflowName: Schema.Schema<string> = Schema.Literal(...workflowNames).annotations({
  identifier: "WorkflowName",
  description: "a terminal-less workflow"
})

/**
 * A terminal-less workflow's payload, one schema per workflow (the path's `{workflow}`
 * chooses which). Money is `{amount, currency}` in minor units.
 */
export const LifecyclePayload: Schema.Schema<unknown> = Schema.make(
  AST.Union.make(
    Lifecycles.workflows.map((workflow) =>
      reshape(objectOf(AST.encodedBoundAST(workflow.payloadSchema.ast)), {
        optional: ["requestId"],
        annotations: {
          [AST.IdentifierAnnotationId]: `LifecyclePayload.${workflow.name}`,
          [AST.TitleAnnotationId]: workflow.name,
          [AST.DescriptionAnnotationId]: `The payload of POST /v1/lifecycle/${workflow.name}.`
        }
      })
    ),
    {
      [AST.IdentifierAnnotationId]: "LifecyclePayload",
      [AST.DescriptionAnnotationId]:
        "The payload of the workflow named by {workflow}: the schema titled with that name. Money is {amount, currency} in minor units; requestId is the idempotency key (a fresh one when absent)."
    }
  )
)
