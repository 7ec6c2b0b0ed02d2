/**
 * Whose an execution is. The engine knows no merchant: an application may run its
 * executions on behalf of several tenants (tillflow's merchants), and names the tenant of
 * what it starts by running the start within {@link within}. The tenant is kept in the
 * execution's `WorkflowStarted` metadata (beside its trace) and in its queue row, and every
 * run of the execution — on whichever worker, after any suspension, and every child it
 * starts — runs within it again, so an activity reads {@link current} to act for the right
 * tenant (the key a remote call is made with, say). The queue row lets listings be scoped
 * to tenants, and a worker hold each tenant to a fair share of its runs (`EngineWorker`'s
 * `tenantConcurrency`). No tenant (`undefined`) is the single-tenant case, and what every
 * execution started before tenants existed has.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Schema from "effect/Schema"

/**
 * What a tenant may be called: 1 to 64 letters, digits, `.`, `_` or `-`. The one definition:
 * an application's own name for its tenants (tillflow's merchant ids) builds on {@link Id}.
 */
export const pattern: RegExp = /^[A-Za-z0-9._-]{1,64}$/

/** {@link pattern} in words, for a refusal. */
export const allowed = "1 to 64 letters, digits, '.', '_' or '-'"

/** A tenant: 1 to 64 letters, digits, `.`, `_` or `-`. */
export const isTenant = (text: string): boolean => pattern.test(text)

/**
 * A tenant's id as a schema, its refusal naming it as the application does.
 *
 * @example
 * const MerchantId = Tenant.Id("a merchant id") // refuses "a b": "a merchant id is 1 to 64 letters, …"
 */
export const Id = (what: string): Schema.filter<typeof Schema.String> =>
  Schema.String.pipe(Schema.pattern(pattern, { message: () => `${what} is ${allowed}` }))

/** The tenant of the fiber: what it starts is that tenant's. */
export const currentRef: FiberRef.FiberRef<string | undefined> = FiberRef.unsafeMake<string | undefined>(
  undefined
)

/** The tenant the current fiber acts for, if any. */
export const current: Effect.Effect<string | undefined> = FiberRef.get(currentRef)

/**
 * Runs `effect` for `tenant`: the executions it starts are that tenant's.
 *
 * @example
 * yield* TerminalOperations.sale(input, { idempotencyKey }).pipe(Tenant.within("cafe-sol"))
 */
export const within =
  (tenant: string | undefined) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locally(effect, currentRef, tenant)

/** The metadata key an event's tenant is kept under. */
export const metadataKey = "tenant"

/** The tenant an event's metadata names, if any (what a scoped read filters by). */
export const ofMetadata = (metadata: { readonly [key: string]: unknown } | undefined): string | undefined => {
  const tenant = metadata?.[metadataKey]
  return typeof tenant === "string" ? tenant : undefined
}

/**
 * Events stamped with the current fiber's tenant in their metadata (unchanged without one),
 * so a read scoped to a tenant finds them: what an execution, or a request acting for a
 * tenant, writes outside the engine's own streams.
 */
export const stamp = <E extends { readonly metadata?: { readonly [key: string]: unknown } | undefined }>(
  events: ReadonlyArray<E>
): Effect.Effect<ReadonlyArray<E>> =>
  Effect.map(current, (tenant) =>
    tenant === undefined
      ? events
      : events.map((e) => ({ ...e, metadata: { ...e.metadata, [metadataKey]: tenant } }) as E)
  )
