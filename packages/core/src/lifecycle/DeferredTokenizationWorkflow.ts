/**
 * Deferred tokenization (`GET /transactions/{guid}/token`, spec 4.7) as a durable
 * workflow: only for the transaction types the service tokenizes (sale, refund,
 * pre-authorization capture, MOTO sale and refund — a sale-and-tokenize is a sale), and
 * only within 12 calendar months of the recorded transaction (spec §8), checked on the
 * `Clock` before the request leaves. Reading a token is idempotent, so an unknown outcome
 * is simply asked again. The token (`cardToken`, not a secret) is recorded.
 */
import * as Workflow from "@effect/workflow/Workflow"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as DurableStep from "@tillflow/engine/DurableStep"
import type { DeferredTokenizationResponse } from "../model/DeferredTokenization.js"
import * as EventStore from "@tillflow/engine/EventStore"
import * as Identifiers from "../model/Identifiers.js"
import { defined } from "./internal/defined.js"
import * as Guarded from "./internal/guarded.js"
import * as Ops from "./internal/transactionOps.js"
import * as LifecycleError from "./LifecycleError.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import * as PolicyError from "./PolicyError.js"
import * as RemoteError from "../model/RemoteError.js"
import * as TerminalCloud from "../model/TerminalCloud.js"
import type * as TransactionHistory from "./TransactionHistory.js"
import { optional } from "../model/internal/Strict.js"

/** The kinds the service tokenizes (spec 4.7). */
export const ELIGIBLE: ReadonlySet<LifecycleEvent.TransactionKind> = new Set([
  "sale",
  "saleAndTokenizeCard",
  "refund",
  "preAuthorizationCapture",
  "moToSale",
  "moToRefund"
])

/** How long after the transaction a token can be asked for (spec §8), in calendar months. */
export const WINDOW_MONTHS = 12

/** Every error of the tokenization workflow. */
export const TokenizationError = Schema.Union(
  LifecycleError.TransactionNotRecorded,
  LifecycleError.TokenizationNotEligible,
  LifecycleError.RequestAlreadyFailed,
  PolicyError.TokenizationWindowClosed,
  PolicyError.NotCharged,
  RemoteError.RemoteError,
  EventStore.EventStoreError
)
/** @see TokenizationError */
export type TokenizationError = typeof TokenizationError.Type

/** The token of a transaction's card. */
export class Token extends Schema.Class<Token>("Token")({
  requestId: Schema.String,
  cardToken: Schema.String,
  cardTokenizationGuid: optional(Schema.String),
  maskedCardNumber: optional(Schema.String)
}) {}

/** Ask for the token of the card of a completed card-present transaction. */
export const Tokenize = Workflow.make({
  name: "DeferredTokenization.Tokenize",
  payload: { requestId: Schema.String, originalGuid: Identifiers.Guid },
  success: Token,
  error: TokenizationError,
  idempotencyKey: (p) => `${p.originalGuid}/${p.requestId}`
})

/** The last instant a token can be asked for: 12 calendar months after the transaction (UTC). */
export const windowEnd = (at: DateTime.Utc): DateTime.Utc => DateTime.add(at, { months: WINDOW_MONTHS })

/** Eligibility and the 12-month window. */
export const decideTokenization = (
  state: TransactionHistory.State,
  now: DateTime.Utc
): Either.Either<void, TokenizationError> => {
  if (!ELIGIBLE.has(state.kind))
    return Either.left(
      new LifecycleError.TokenizationNotEligible({
        message: `deferred tokenization applies to sale, refund, preAuthorizationCapture, moToSale and moToRefund; ${state.guid} is a ${state.kind}`,
        guid: state.guid,
        kind: state.kind,
        rule: "eligible-types"
      })
    )
  const end = windowEnd(state.at)
  if (DateTime.greaterThan(now, end))
    return Either.left(
      new PolicyError.TokenizationWindowClosed({
        message:
          `deferred tokenization is possible within ${WINDOW_MONTHS} months of the transaction: ${state.guid} was made at ` +
          `${DateTime.formatIso(state.at)}, the window closed at ${DateTime.formatIso(end)}`,
        originalGuid: state.guid
      })
    )
  return Either.void
}

const tokenize = (payload: Workflow.Workflow.Payload<typeof Tokenize>) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const guid = payload.originalGuid
    const spec: Guarded.Spec<
      TransactionHistory.State,
      Identifiers.Guid,
      DeferredTokenizationResponse,
      Token,
      TokenizationError
    > = {
      operation: "tokenization",
      streamId: LifecycleEvent.transactionStream(guid),
      requestId: payload.requestId,
      requestedType: "TokenizationRequested",
      outcomeTypes: ["CardTokenized"],
      notChargedReference: guid,
      fold: Ops.foldTransaction(guid, "tokenization"),
      decide: (state, at) =>
        Either.map(decideTokenization(state, at), () =>
          LifecycleEvent.TokenizationRequested.make({ requestId: payload.requestId, at })
        ),
      toRequest: () => guid,
      send: (g) => cloud.deferredToken(g),
      onUnknown: "resend",
      applied: (response, { now }) => {
        const cardToken = response.cardToken
        if (cardToken === undefined)
          return Either.left(
            RemoteError.fromResponse(
              502,
              JSON.stringify({ error: { message: "the tokenization answer carried no cardToken" } })
            )
          )
        const token = defined({
          requestId: payload.requestId,
          cardToken,
          cardTokenizationGuid: response.cardTokenizationGuid,
          maskedCardNumber: response.maskedCardNumber
        })
        return Either.right({
          appends: [
            {
              streamId: LifecycleEvent.transactionStream(guid),
              expected: "any",
              events: [LifecycleEvent.CardTokenized.make({ ...token, at: now })]
            }
          ],
          output: Token.make(token)
        })
      },
      output: (outcome) => {
        const d = outcome.data as {
          readonly cardToken: string
          readonly cardTokenizationGuid?: string
          readonly maskedCardNumber?: string
        }
        return Token.make(
          defined({
            requestId: payload.requestId,
            cardToken: d.cardToken,
            cardTokenizationGuid: d.cardTokenizationGuid,
            maskedCardNumber: d.maskedCardNumber
          })
        )
      }
    }
    return yield* deferredTokenizationTokenizeStep(Guarded.run(spec))
  })

/** The tokenization workflow, registered with the engine. */
export const layer: Layer.Layer<
  never,
  never,
  WorkflowEngine | EventStore.EventStore | TerminalCloud.TerminalCloud
> = Tokenize.toLayer((payload) => tokenize(payload))

// The durable steps of this module, defined once (schemas built once; `DurableStep`).
const deferredTokenizationTokenizeStep = DurableStep.make({
  name: "DeferredTokenization.Tokenize",
  success: Token,
  error: TokenizationError
})
