/**
 * Typed events on the way into and out of the event store. Each event type is defined once
 * with its schema and its current `schemaVersion`; a registry of definitions encodes typed
 * events into `NewEvent`s (data in the schema's encoded, JSON form) and decodes
 * `RecordedEvent`s back, first running the upcasters that turn the data of an old schema
 * version into the current one, so old events are read as the new shape without ever being
 * rewritten (rewriting would break the hash chain, and the log is the audit trail).
 *
 * @example
 * const OrderPlaced = EventRegistry.define("OrderPlaced", Schema.Struct({
 *   amount: Schema.BigInt, currency: Schema.String
 * }), {
 *   schemaVersion: 2,
 *   // version 1 stored the amount as a number of minor units
 *   upcasters: {
 *     1: (data) => {
 *       const v1 = data as { readonly amount: number; readonly currency: string }
 *       return { ...v1, amount: String(v1.amount) }
 *     }
 *   }
 * })
 * const registry = EventRegistry.make(OrderPlaced)
 * const event = yield* registry.encode(OrderPlaced.make({ amount: 1000n, currency: "EUR" }))
 * yield* store.append("order-1", EventStore.NoStream, [event])
 * const [decoded] = yield* registry.decodeAll(yield* store.readStream("order-1"))
 */
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as EventStore from "./EventStore.js"

/**
 * Turns the data of schema version `n` (the key under which it is registered) into the data
 * of version `n + 1`. Pure; it may throw, which fails the decode with `EventCodecError`.
 */
export type Upcaster = (data: EventStore.Json) => EventStore.Json

/** A typed event, before encoding. */
export interface TypedEvent<Type extends string, A> {
  readonly type: Type
  readonly data: A
  readonly metadata?: EventStore.JsonObject | undefined
  readonly eventId?: string | undefined
}

/** A recorded event decoded to its current type, with the record it came from. */
export interface DecodedEvent<Type extends string, A> {
  readonly type: Type
  readonly data: A
  readonly recorded: EventStore.RecordedEvent
}

/** The definition of one event type. */
export interface Definition<Type extends string, S extends Schema.Schema.AnyNoContext> {
  readonly type: Type
  /** The version written by `encode`; older versions are upcast on `decode`. */
  readonly schemaVersion: number
  readonly schema: S
  readonly upcasters: Readonly<Record<number, Upcaster>>
  /** Builds a typed event of this type. */
  readonly make: (
    data: Schema.Schema.Type<S>,
    options?: { readonly metadata?: EventStore.JsonObject | undefined; readonly eventId?: string | undefined }
  ) => TypedEvent<Type, Schema.Schema.Type<S>>
}

/** Any definition. */
export type Any = Definition<string, Schema.Schema.AnyNoContext>

/** The typed events of a set of definitions. */
export type Event<D extends Any> =
  D extends Definition<infer Type, infer S> ? TypedEvent<Type, Schema.Schema.Type<S>> : never

/** The decoded events of a set of definitions. */
export type Decoded<D extends Any> =
  D extends Definition<infer Type, infer S> ? DecodedEvent<Type, Schema.Schema.Type<S>> : never

/** An event could not be encoded or decoded. Names the issue's kind and path, never the value. */
export class EventCodecError extends Schema.TaggedError<EventCodecError>()("EventCodecError", {
  direction: Schema.Literal("encode", "decode"),
  eventType: Schema.String,
  schemaVersion: Schema.Int,
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot ${this.direction} event "${this.eventType}" (schema version ${this.schemaVersion}): ${this.reason}`
  }
}

/** A recorded event's type is not in the registry. */
export class UnknownEventType extends Schema.TaggedError<UnknownEventType>()("UnknownEventType", {
  eventType: Schema.String
}) {
  override get message(): string {
    return `No event definition for type "${this.eventType}"`
  }
}

/**
 * Defines an event type. `schemaVersion` defaults to 1; `upcasters[n]` lifts version `n`
 * data to `n + 1` and must exist for every `n` below `schemaVersion` that was ever stored.
 */
export const define = <const Type extends string, S extends Schema.Schema.AnyNoContext>(
  type: Type,
  schema: S,
  options: {
    readonly schemaVersion?: number | undefined
    readonly upcasters?: Readonly<Record<number, Upcaster>> | undefined
  } = {}
): Definition<Type, S> => ({
  type,
  schemaVersion: options.schemaVersion ?? 1,
  schema,
  upcasters: options.upcasters ?? {},
  make: (data, makeOptions) => ({
    type,
    data,
    ...(makeOptions?.metadata === undefined ? {} : { metadata: makeOptions.metadata }),
    ...(makeOptions?.eventId === undefined ? {} : { eventId: makeOptions.eventId })
  })
})

// Issue kinds and paths only: a ParseError's message would quote the offending value,
// and that value may be exactly what must not reach a log.
const describeParseError = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map(
      (issue) => `${issue._tag} at ${issue.path.length === 0 ? "(root)" : issue.path.map(String).join(".")}`
    )
    .join("; ")

/** A set of definitions, indexed by type. */
export interface Registry<D extends Any> {
  readonly definitions: ReadonlyArray<D>
  /** Encodes a typed event into what `EventStore.append` takes, at the current schema version. */
  readonly encode: (event: Event<D>) => Effect.Effect<EventStore.NewEvent, EventCodecError>
  /** Encodes a batch. */
  readonly encodeAll: (
    events: ReadonlyArray<Event<D>>
  ) => Effect.Effect<ReadonlyArray<EventStore.NewEvent>, EventCodecError>
  /** Upcasts a recorded event's data to the current version and decodes it. */
  readonly decode: (
    recorded: EventStore.RecordedEvent
  ) => Effect.Effect<Decoded<D>, EventCodecError | UnknownEventType>
  /** Decodes a batch, in order. */
  readonly decodeAll: (
    recorded: ReadonlyArray<EventStore.RecordedEvent>
  ) => Effect.Effect<ReadonlyArray<Decoded<D>>, EventCodecError | UnknownEventType>
  /** True when the registry knows the type. */
  readonly has: (type: string) => boolean
}

/** Builds a registry; two definitions of one type are a programming error and throw. */
export const make = <const Ds extends ReadonlyArray<Any>>(...definitions: Ds): Registry<Ds[number]> => {
  type D = Ds[number]
  const byType = new Map<string, D>()
  for (const definition of definitions) {
    if (byType.has(definition.type)) {
      throw new Error(`EventRegistry.make: event type "${definition.type}" is defined twice`)
    }
    byType.set(definition.type, definition)
  }

  const encode = (event: Event<D>): Effect.Effect<EventStore.NewEvent, EventCodecError> => {
    const definition = byType.get(event.type)
    if (definition === undefined) {
      return Effect.fail(
        new EventCodecError({
          direction: "encode",
          eventType: event.type,
          schemaVersion: 0,
          reason: "unknown type"
        })
      )
    }
    return Schema.encodeUnknown(definition.schema)(event.data).pipe(
      Effect.mapError(
        (error) =>
          new EventCodecError({
            direction: "encode",
            eventType: event.type,
            schemaVersion: definition.schemaVersion,
            reason: describeParseError(error)
          })
      ),
      Effect.map((data): EventStore.NewEvent => ({
        type: event.type,
        schemaVersion: definition.schemaVersion,
        data: data as EventStore.Json,
        metadata: event.metadata,
        eventId: event.eventId
      }))
    )
  }

  const upcast = (
    definition: D,
    recorded: EventStore.RecordedEvent
  ): Effect.Effect<EventStore.Json, EventCodecError> =>
    Effect.suspend(() => {
      const fail = (reason: string) =>
        Effect.fail(
          new EventCodecError({
            direction: "decode",
            eventType: recorded.type,
            schemaVersion: recorded.schemaVersion,
            reason
          })
        )
      if (recorded.schemaVersion > definition.schemaVersion) {
        return fail(`this code reads up to schema version ${definition.schemaVersion}`)
      }
      let data = recorded.data
      for (let version = recorded.schemaVersion; version < definition.schemaVersion; version++) {
        const upcaster = definition.upcasters[version]
        if (upcaster === undefined) return fail(`no upcaster from schema version ${version}`)
        try {
          data = upcaster(data)
        } catch (cause) {
          return fail(`the upcaster from schema version ${version} threw: ${String(cause)}`)
        }
      }
      return Effect.succeed(data)
    })

  const decode = (
    recorded: EventStore.RecordedEvent
  ): Effect.Effect<Decoded<D>, EventCodecError | UnknownEventType> => {
    const definition = byType.get(recorded.type)
    if (definition === undefined) return Effect.fail(new UnknownEventType({ eventType: recorded.type }))
    return upcast(definition, recorded).pipe(
      Effect.flatMap((data) =>
        Schema.decodeUnknown(definition.schema)(data).pipe(
          Effect.mapError(
            (error) =>
              new EventCodecError({
                direction: "decode",
                eventType: recorded.type,
                schemaVersion: recorded.schemaVersion,
                reason: describeParseError(error)
              })
          )
        )
      ),
      Effect.map((data) => ({ type: recorded.type, data, recorded }) as Decoded<D>)
    )
  }

  return {
    definitions,
    encode,
    encodeAll: (events) => Effect.forEach(events, encode),
    decode,
    decodeAll: (recorded) => Effect.forEach(recorded, decode),
    has: (type) => byType.has(type)
  }
}
