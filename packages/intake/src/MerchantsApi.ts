/**
 * The merchant registry's routes of the intake API (issue 32): the merchants a deployment
 * serves and their API keys, listed and changed by an admin (the bearer token is one). A
 * key goes in once (`POST /v1/merchants/{merchantId}/keys`) and never comes out: every
 * answer shows a key's id, kind, state and dates, and the key field is decoded straight into
 * a `Redacted`, so neither a log line nor a refusal can echo it. `IntakeApi` adds the
 * authentication to this group (this module does not import it).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { MerchantRegistry } from "@tillflow/core"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Intake from "./Intake.js"

/** A key as listed: its id, kind, state, dates and the key-encryption key it is sealed under; never the key. */
export const KeyView = Schema.Struct({
  keyId: Schema.String,
  kind: MerchantRegistry.KeyKind,
  state: Schema.Literal("active", "retired"),
  /** When it was added (epoch ms). */
  createdAt: Schema.Number,
  /** When it was retired (epoch ms). */
  retiredAt: Schema.optional(Schema.Number),
  /** The id of the key-encryption key it is sealed under (a name, not a secret). */
  kek: Schema.String
}).annotations({
  identifier: "MerchantKeyView",
  description: "A merchant's API key as listed: never the key itself."
})
/** @see KeyView */
export type KeyView = typeof KeyView.Type

const keyExample: KeyView = {
  keyId: "key-5b0e8c1a-2f4d-4e6b-9a7c-3d2e1f0a9b8c",
  kind: "merchant",
  state: "active",
  createdAt: 1767225600000,
  kek: "kek-2026-11"
}

/** A merchant as listed. */
export const MerchantView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  mcc: Schema.String,
  virtualTerminal: Schema.optional(Schema.String),
  /** Whether its acquirer accepts partial reversals; absent: the deployment's (`TILLFLOW_ACQUIRER_PARTIAL_REVERSAL`). */
  partialReversal: Schema.optional(Schema.Boolean),
  /** Whether its acquirer reverses a capture before settlement; absent: the deployment's (`TILLFLOW_ACQUIRER_CAPTURE_REVERSAL`). */
  captureReversal: Schema.optional(Schema.Boolean),
  /** Its own rate limit of operations started; absent: the deployment's (`TILLFLOW_MERCHANT_RATE_LIMIT`, or none). */
  rateLimit: Schema.optional(MerchantRegistry.RateLimit),
  enabled: Schema.Boolean,
  /** When it was registered (epoch ms). */
  createdAt: Schema.Number,
  keys: Schema.Array(KeyView)
}).annotations({
  identifier: "MerchantView",
  description: "A merchant, enabled or not, with its keys (ids, kinds, states, dates: never a key)."
})
/** @see MerchantView */
export type MerchantView = typeof MerchantView.Type

const merchantExample: MerchantView = {
  id: "m-7",
  name: "Café Sol",
  mcc: "5812",
  virtualTerminal: "V400m-7",
  enabled: true,
  createdAt: 1767225600000,
  keys: [keyExample]
}
const merchantAnswer = MerchantView.annotations({ examples: [merchantExample] })

/** What registers a merchant (`MerchantRegistry.NewMerchant`): a field that breaks a rule is 400 naming it. */
export const RegisterMerchant = MerchantRegistry.NewMerchant.annotations({
  identifier: "RegisterMerchant",
  description: "A merchant to register: enabled, without keys.",
  examples: [{ id: "m-7", name: "Café Sol", mcc: "5812", virtualTerminal: "V400m-7" }],
  parseOptions: { onExcessProperty: "error", errors: "all" }
})

/**
 * An API key as sent. Its checks say what is wrong without the value (the platform's
 * default messages quote what they refused), and it is a `Redacted` once decoded.
 */
const KeyText = Schema.String.annotations({ message: () => "an API key is a string" }).pipe(
  Schema.minLength(1, { message: () => "an API key is not empty" }),
  Schema.maxLength(4096, { message: () => "an API key is at most 4096 characters" })
)

/** A key to add to a merchant: its kind and the key, sealed before it is stored. */
export const AddKey = Schema.Struct({
  kind: MerchantRegistry.KeyKind,
  key: Schema.Redacted(KeyText).annotations({
    title: "API key",
    description: "The API key: sealed before it is stored, never returned, never logged."
  })
}).annotations({
  identifier: "AddMerchantKey",
  description: "An API key to add to a merchant: answered with the key's id, never the key.",
  examples: [{ kind: "merchant", key: Redacted.make("<the merchant's API key>") }],
  parseOptions: { onExcessProperty: "error", errors: "all" }
})

/**
 * What a merchant's acquirer supports: each capability given is set, `null` sets it back to
 * the deployment's, one left out is unchanged.
 */
export const SetAcquirer = Schema.Struct({
  partialReversal: Schema.optional(Schema.NullOr(Schema.Boolean)),
  captureReversal: Schema.optional(Schema.NullOr(Schema.Boolean))
}).annotations({
  identifier: "SetMerchantAcquirer",
  description:
    "What the merchant's acquirer supports: true or false sets a capability for the merchant, null sets it back to the deployment's (TILLFLOW_ACQUIRER_PARTIAL_REVERSAL, TILLFLOW_ACQUIRER_CAPTURE_REVERSAL), a field left out is unchanged.",
  examples: [{ partialReversal: true, captureReversal: null }],
  parseOptions: { onExcessProperty: "error", errors: "all" }
})
/** @see SetAcquirer */
export type SetAcquirer = typeof SetAcquirer.Type

/**
 * A merchant's own rate limit of operations started, or `null`: back to the deployment's
 * (`TILLFLOW_MERCHANT_RATE_LIMIT`, or none).
 */
export const SetRateLimit = Schema.Struct({
  rateLimit: Schema.NullOr(MerchantRegistry.RateLimit)
}).annotations({
  identifier: "SetMerchantRateLimit",
  description:
    "The merchant's own rate limit of operations started (count per intervalMillis, 1000 or 60000, at most burst at once), or null to follow the deployment's (TILLFLOW_MERCHANT_RATE_LIMIT, or none). Past it, the merchant's new operations are refused 429 RateLimited.",
  examples: [{ rateLimit: { count: 20, intervalMillis: 1_000, burst: 20 } }, { rateLimit: null }],
  parseOptions: { onExcessProperty: "error", errors: "all" }
})
/** @see SetRateLimit */
export type SetRateLimit = typeof SetRateLimit.Type

/** A merchant id already registered: 409, `field` naming what collides. */
export class MerchantConflict extends Schema.TaggedError<MerchantConflict>()(
  "MerchantConflict",
  { message: Schema.String, field: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "The merchant id is already registered." })
) {}

const merchantId = HttpApiSchema.param("merchantId", Intake.Text)
const keyId = HttpApiSchema.param("keyId", Intake.Text)

const adminOnly = "Admin only (the bearer token is one): a viewer's or an operator's session is refused 403."

/** The merchants of the deployment and their keys. */
export class MerchantsGroup extends HttpApiGroup.make("merchants")
  .add(
    HttpApiEndpoint.get("list", "/v1/merchants")
      .addSuccess(Schema.Array(MerchantView).annotations({ examples: [[merchantExample]] }))
      .annotate(OpenApi.Summary, "List the merchants")
      .annotate(
        OpenApi.Description,
        `Every merchant with its keys' ids, kinds, states and dates (never a key). ${adminOnly}`
      )
  )
  .add(
    HttpApiEndpoint.post("register", "/v1/merchants")
      .setPayload(RegisterMerchant)
      .addSuccess(merchantAnswer)
      .addError(
        MerchantConflict.annotations({
          examples: [new MerchantConflict({ message: "merchant m-7 is already registered", field: "id" })]
        })
      )
      .annotate(OpenApi.Summary, "Register a merchant")
      .annotate(
        OpenApi.Description,
        `Registers a merchant, enabled, without keys. A field that breaks a rule (an id of letters, digits, '.', '_', '-'; an MCC of 4 digits) is 400 naming it; an id already registered is 409. ${adminOnly}`
      )
  )
  .add(
    HttpApiEndpoint.post("disable")`/v1/merchants/${merchantId}/disable`
      .addSuccess(merchantAnswer)
      .annotate(OpenApi.Summary, "Disable a merchant")
      .annotate(OpenApi.Description, `A disabled merchant's operations are refused. ${adminOnly}`)
  )
  .add(
    HttpApiEndpoint.post("enable")`/v1/merchants/${merchantId}/enable`
      .addSuccess(merchantAnswer)
      .annotate(OpenApi.Summary, "Enable a merchant")
      .annotate(OpenApi.Description, `Enables a merchant again. ${adminOnly}`)
  )
  .add(
    HttpApiEndpoint.post("setAcquirer")`/v1/merchants/${merchantId}/acquirer`
      .setPayload(SetAcquirer)
      .addSuccess(merchantAnswer)
      .annotate(OpenApi.Summary, "Set what a merchant's acquirer supports")
      .annotate(
        OpenApi.Description,
        `Partial reversals and reversing a capture before settlement, which the spec leaves to the acquirer: a reversal of the merchant's is decided with them (the intake's check and the workflows', which record their decision), each one unset the deployment's. ${adminOnly}`
      )
  )
  .add(
    HttpApiEndpoint.post("setRateLimit")`/v1/merchants/${merchantId}/rate-limit`
      .setPayload(SetRateLimit)
      .addSuccess(merchantAnswer)
      .annotate(OpenApi.Summary, "Set a merchant's own rate limit")
      .annotate(
        OpenApi.Description,
        `How fast the merchant may start operations, over the deployment's TILLFLOW_MERCHANT_RATE_LIMIT (null: the deployment's again); applied by every worker to the merchant's next operation. ${adminOnly}`
      )
  )
  .add(
    HttpApiEndpoint.post("addKey")`/v1/merchants/${merchantId}/keys`
      .setPayload(AddKey)
      .addSuccess(KeyView.annotations({ examples: [keyExample] }))
      .annotate(OpenApi.Summary, "Add an API key to a merchant")
      .annotate(
        OpenApi.Description,
        `Seals the key under the deployment's key-encryption key (TILLFLOW_KEK) and stores it: answered with the key's id, kind and state, never the key, which no route returns and no log holds. ${adminOnly}`
      )
  )
  .add(
    HttpApiEndpoint.post("retireKey")`/v1/merchants/${merchantId}/keys/${keyId}/retire`
      .addSuccess(
        KeyView.annotations({
          examples: [{ ...keyExample, state: "retired", retiredAt: 1767312000000 }]
        })
      )
      .annotate(OpenApi.Summary, "Retire a merchant's API key")
      .annotate(
        OpenApi.Description,
        `A retired key is never used again (kept sealed, for the record); retiring it again answers it as it is. ${adminOnly}`
      )
  )
  .annotate(
    OpenApi.Description,
    "The merchants of the deployment and their API keys, admin only. Without a merchant registry on the worker (no TILLFLOW_KEK configured) or when its store does not answer: 503 saying why."
  ) {}
