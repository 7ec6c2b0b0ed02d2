/**
 * The transaction time of a result (`efttimestamp`, by the terminal clock), in the form it
 * came. Polled and callback results send epoch milliseconds as a number (`1615374961000`)
 * and older results a numeric string: an instant. Status-endpoint results send a wall-clock
 * string `YYYYMMDDHHmmssSSS` (`"20230511110113006"`) with no zone: the terminal's local
 * time (a status sample from a terminal in Madrid reads two hours ahead of the UUID time of
 * its guid). Its zone is not known, so it is kept as a local date-time, never read as UTC:
 * where a rule needs an instant, {@link earliestInstant} gives the earliest the local time
 * can be (UTC+14), so that a window measured from it closes early rather than late.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const wallClock = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{3})$/

/** The wall-clock fields read as if they were UTC, or undefined when they are no real date. */
const asIfUtc = (text: string): number | undefined => {
  const m = wallClock.exec(text)
  if (m === null) return undefined
  const [, y, mo, d, h, mi, s, ms] = m.map(Number)
  const epoch = Date.UTC(y ?? 0, (mo ?? 1) - 1, d ?? 1, h ?? 0, mi ?? 0, s ?? 0, ms ?? 0)
  const check = new Date(epoch)
  // Reject 20231332…: Date.UTC would silently roll the month over.
  return check.getUTCMonth() === (mo ?? 1) - 1 && check.getUTCDate() === d && check.getUTCHours() === h
    ? epoch
    : undefined
}

/** A terminal's local date-time, `YYYYMMDDHHmmssSSS`, zone unknown: never an instant by itself. */
export const LocalDateTime = Schema.String.pipe(
  Schema.filter((s) => asIfUtc(s) !== undefined || "expected a real YYYYMMDDHHmmssSSS date-time"),
  Schema.brand("EftLocalDateTime")
).annotations({ identifier: "EftLocalDateTime" })
/** @see LocalDateTime */
export type LocalDateTime = typeof LocalDateTime.Type

/** An instant the terminal gave as epoch milliseconds; `raw` is the value as it came. */
export const EpochMillis = Schema.TaggedStruct("EpochMillis", {
  instant: Schema.DateTimeUtcFromSelf,
  raw: Schema.Union(Schema.Number, Schema.String)
})
/** @see EpochMillis */
export type EpochMillis = typeof EpochMillis.Type

/** The terminal's local wall-clock time, zone unknown, kept as it came. */
export const TerminalLocal = Schema.TaggedStruct("TerminalLocal", { local: LocalDateTime })
/** @see TerminalLocal */
export type TerminalLocal = typeof TerminalLocal.Type

/** An `efttimestamp` as read: an instant, or the terminal's local time. */
export type Value = EpochMillis | TerminalLocal

/** Parses any accepted form, or returns undefined. */
export const parse = (input: number | string): Value | undefined => {
  if (typeof input === "number") {
    return Number.isSafeInteger(input)
      ? EpochMillis.make({ instant: DateTime.unsafeMake(input), raw: input })
      : undefined
  }
  const trimmed = input.trim()
  if (wallClock.test(trimmed)) {
    return asIfUtc(trimmed) === undefined
      ? undefined
      : TerminalLocal.make({ local: LocalDateTime.make(trimmed) })
  }
  if (/^[0-9]{1,16}$/.test(trimmed)) {
    return EpochMillis.make({ instant: DateTime.unsafeMake(Number(trimmed)), raw: input })
  }
  return undefined
}

/** An `efttimestamp` of epoch milliseconds (results built by tillflow's own tests and tools). */
export const fromEpochMillis = (millis: number): EpochMillis =>
  EpochMillis.make({ instant: DateTime.unsafeMake(millis), raw: millis })

/** The instant, when the terminal gave one (epoch milliseconds); none for a local time. */
export const instant = (value: Value): Option.Option<DateTime.Utc> =>
  value._tag === "EpochMillis" ? Option.some(value.instant) : Option.none()

/** The largest offset ahead of UTC a zone has (UTC+14, Kiribati). */
const aheadOfUtcAtMost = Duration.hours(14)

/**
 * The earliest instant the value can stand for: the instant itself, or for a local time
 * of unknown zone, that time at UTC+14. A window measured from it (capture, MOTO reversal,
 * tokenization) closes early, never late.
 */
export const earliestInstant = (value: Value): DateTime.Utc =>
  value._tag === "EpochMillis"
    ? value.instant
    : DateTime.subtractDuration(DateTime.unsafeMake(asIfUtc(value.local) ?? 0), aheadOfUtcAtMost)

/** The value for people: an ISO instant, or the local time saying its zone is unknown. */
export const describe = (value: Value): string => {
  if (value._tag === "EpochMillis") return DateTime.formatIso(value.instant)
  const l = value.local
  return `${l.slice(0, 4)}-${l.slice(4, 6)}-${l.slice(6, 8)} ${l.slice(8, 10)}:${l.slice(10, 12)}:${l.slice(12, 14)}.${l.slice(14)} (terminal local time, zone unknown)`
}

/**
 * Reads every form and writes it back as it came: epoch milliseconds as they were sent
 * (number or numeric string), a local time as its `YYYYMMDDHHmmssSSS` string.
 */
export const EftTimestamp = Schema.transformOrFail(
  Schema.Union(Schema.Number, Schema.String),
  Schema.Union(EpochMillis, TerminalLocal),
  {
    strict: true,
    decode: (input, _, ast) => {
      const value = parse(input)
      return value === undefined
        ? ParseResult.fail(
            new ParseResult.Type(ast, input, "expected epoch milliseconds or a YYYYMMDDHHmmssSSS timestamp")
          )
        : ParseResult.succeed(value)
    },
    encode: (value) => ParseResult.succeed(value._tag === "EpochMillis" ? value.raw : value.local)
  }
).annotations({ identifier: "EftTimestamp" })

/** The status endpoint's `efttimestamp`: the same schema (both forms are read, each written as it came). */
export const EftTimestampWallClock = EftTimestamp
