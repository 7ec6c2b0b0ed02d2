/**
 * The transaction time of a result (`efttimestamp`, by the terminal clock). Polled and
 * callback results send epoch milliseconds as a number (`1615374961000`); status-endpoint
 * results a string `YYYYMMDDHHmmssSSS` (`"20230511110113006"`); older results a numeric
 * string. All read to one instant. The wall-clock form carries no zone: it is read as
 * UTC, the zone the gateway's samples agree with.
 */
import * as DateTime from "effect/DateTime"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const wallClock = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{3})$/

/** Parses any accepted form, or returns undefined. */
export const parse = (input: number | string): DateTime.Utc | undefined => {
  if (typeof input === "number") {
    return Number.isSafeInteger(input) ? DateTime.unsafeMake(input) : undefined
  }
  const trimmed = input.trim()
  const m = wallClock.exec(trimmed)
  if (m !== null) {
    const [, y, mo, d, h, mi, s, ms] = m.map(Number)
    const epoch = Date.UTC(y ?? 0, (mo ?? 1) - 1, d ?? 1, h ?? 0, mi ?? 0, s ?? 0, ms ?? 0)
    const check = new Date(epoch)
    // Reject 20231332…: Date.UTC would silently roll the month over.
    return check.getUTCMonth() === (mo ?? 1) - 1 && check.getUTCDate() === d && check.getUTCHours() === h
      ? DateTime.unsafeMake(epoch)
      : undefined
  }
  if (/^[0-9]{1,16}$/.test(trimmed)) return DateTime.unsafeMake(Number(trimmed))
  return undefined
}

/** `YYYYMMDDHHmmssSSS` in UTC. */
export const formatWallClock = (instant: DateTime.Utc): string => {
  const d = new Date(DateTime.toEpochMillis(instant))
  const p = (n: number, w = 2) => n.toString().padStart(w, "0")
  return (
    p(d.getUTCFullYear(), 4) +
    p(d.getUTCMonth() + 1) +
    p(d.getUTCDate()) +
    p(d.getUTCHours()) +
    p(d.getUTCMinutes()) +
    p(d.getUTCSeconds()) +
    p(d.getUTCMilliseconds(), 3)
  )
}

const make = (encodeAs: "epochMillis" | "wallClock") =>
  Schema.transformOrFail(Schema.Union(Schema.Number, Schema.String), Schema.DateTimeUtcFromSelf, {
    strict: true,
    decode: (input, _, ast) => {
      const instant = parse(input)
      return instant === undefined
        ? ParseResult.fail(
            new ParseResult.Type(ast, input, "expected epoch milliseconds or a YYYYMMDDHHmmssSSS timestamp")
          )
        : ParseResult.succeed(instant)
    },
    encode: (instant) =>
      ParseResult.succeed(
        encodeAs === "epochMillis" ? DateTime.toEpochMillis(instant) : formatWallClock(instant)
      )
  })

/** Reads every form; writes epoch milliseconds (polled and callback results). */
export const EftTimestamp = make("epochMillis").annotations({ identifier: "EftTimestamp" })

/** Reads every form; writes `YYYYMMDDHHmmssSSS` (status-endpoint results). */
export const EftTimestampWallClock = make("wallClock").annotations({ identifier: "EftTimestampWallClock" })
