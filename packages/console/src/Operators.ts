/**
 * The people who run the console, configured by the deployment: each operator has a name, a
 * role and a hashed secret (never the secret itself). Roles are ordered: a `viewer` reads
 * (executions, timelines, the ledger, alerts), an `operator` also acts on payments, an
 * `admin` also acts on the worker (rebuilding projections, simulator controls). The intake's
 * bearer token stays the machines' credential; when no operator is configured, the console
 * is logged into with that token as before (one shared `token` admin, attributed to no one).
 *
 * Secrets are hashed with PBKDF2-HMAC-SHA-256 (Web Crypto: no native module, the same on
 * every platform) at {@link defaultIterations} iterations, written as
 * `pbkdf2-sha256$<iterations>$<salt>$<hash>` (base64url), which `tillflow operators hash`
 * prints. A wrong name costs the same time as a wrong secret.
 *
 * @example
 * const registry = yield* Operators.parse('[{"name":"ana","role":"operator","secret":"pbkdf2-sha256$..."}]')
 * const ana = yield* Operators.authenticate(registry, "ana", presented) // Option<Operator>
 */
import * as Tenant from "@tillflow/engine/Tenant"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** What an operator may do, from least to most. */
export const Role = Schema.Literal("viewer", "operator", "admin")
/** @see Role */
export type Role = typeof Role.Type

const rank: Readonly<Record<Role, number>> = { viewer: 0, operator: 1, admin: 2 }

/** Whether `role` may do what `needed` may. */
export const allows = (role: Role, needed: Role): boolean => rank[role] >= rank[needed]

/** Who is acting: a configured operator, or the shared intake token. */
export interface Operator {
  readonly name: string
  readonly role: Role
  /** `operator`: a named login; `token`: the intake's bearer token (machines, or a console without operators). */
  readonly via: "operator" | "token"
  /**
   * The merchants it may see and act for (issue 32): a merchant's own staff or backend.
   * Absent: every merchant — the platform's people and machines.
   */
  readonly merchants?: ReadonlyArray<string> | undefined
}

/** A merchant id as a scope names it: a merchant is the engine's tenant (core's `MerchantId` too). */
const MerchantId = Tenant.Id("a merchant id")

/** The merchants a credential is limited to: one at least (absent means all). */
const Merchants = Schema.optional(Schema.Array(MerchantId).pipe(Schema.minItems(1)))

/** The identity of the intake's bearer token. */
export const tokenOperator: Operator = { name: "token", role: "admin", via: "token" }

/** The hash format's name. */
export const scheme = "pbkdf2-sha256"

/** Iterations of a new hash (OWASP's 2023 figure for PBKDF2-HMAC-SHA-256). */
export const defaultIterations = 600_000

/** One configured operator, as the configuration writes it. */
export const OperatorEntry = Schema.Struct({
  name: Schema.String.pipe(
    Schema.pattern(/^[a-z0-9][a-z0-9._-]{0,63}$/i, {
      message: () =>
        "an operator name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
    })
  ),
  role: Role,
  merchants: Merchants,
  secret: Schema.String.pipe(
    Schema.pattern(/^pbkdf2-sha256\$\d{4,7}\$[A-Za-z0-9_-]{16,}\$[A-Za-z0-9_-]{43}$/, {
      message: () =>
        "secret must be a hash as `tillflow operators hash` prints it (pbkdf2-sha256$<iterations>$<salt>$<hash>), never the secret itself"
    })
  )
})
/** @see OperatorEntry */
export type OperatorEntry = typeof OperatorEntry.Type

/** The configured operators, by name. */
export interface Registry {
  readonly operators: ReadonlyMap<string, OperatorEntry>
}

/** No operator configured: the console is logged into with the intake's token. */
export const none: Registry = { operators: new Map() }

/** The configuration of the operators could not be used: what was wrong, and where. */
export class InvalidOperators extends Schema.TaggedError<InvalidOperators>()("InvalidOperators", {
  message: Schema.String
}) {}

/** The entries of a JSON array of the configuration, each decoded by `entry`; `expected` says the form. */
const entriesOf = <A, I>(
  entry: Schema.Schema<A, I>,
  text: string,
  expected: string
): Either.Either<ReadonlyArray<A>, InvalidOperators> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(new InvalidOperators({ message: `not JSON: ${(error as Error).message}` }))
  }
  return Either.mapLeft(
    Schema.decodeUnknownEither(Schema.Array(entry), { errors: "first" })(json),
    (error) => new InvalidOperators({ message: `expected ${expected}: ${error.message}` })
  )
}

/**
 * The operators of a JSON array (`TILLFLOW_OPERATORS`, or the file `TILLFLOW_OPERATORS_FILE`
 * names): each `{name, role, secret}` and, for a merchant's own staff, `merchants` (the
 * merchants they see and act for); names are unique (case-insensitive).
 */
export const parse = (text: string): Either.Either<Registry, InvalidOperators> => {
  const decoded = entriesOf(
    OperatorEntry,
    text,
    `[{"name", "role" (viewer, operator or admin), "secret" (a hash)}]`
  )
  if (Either.isLeft(decoded)) return Either.left(decoded.left)
  const operators = new Map<string, OperatorEntry>()
  for (const entry of decoded.right) {
    const key = entry.name.toLowerCase()
    if (operators.has(key)) {
      return Either.left(new InvalidOperators({ message: `operator "${entry.name}" is configured twice` }))
    }
    operators.set(key, entry)
  }
  return Either.right({ operators })
}

const encoder = new TextEncoder()

const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "")

const fromBase64url = (text: string): Uint8Array => {
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4)
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0))
}

const derive = (secret: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> =>
  globalThis.crypto.subtle
    .importKey("raw", encoder.encode(secret), "PBKDF2", false, ["deriveBits"])
    .then((key) =>
      globalThis.crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, 256)
    )
    .then((bits) => new Uint8Array(bits))

/** The hash of `secret` to configure (a fresh salt each time). */
export const hash = (secret: string, iterations: number = defaultIterations): Effect.Effect<string> =>
  Effect.promise(async () => {
    const salt = globalThis.crypto.getRandomValues(new Uint8Array(16))
    return `${scheme}$${iterations}$${base64url(salt)}$${base64url(await derive(secret, salt, iterations))}`
  })

/** Whether `secret` is the one `hashed` was made from (compared in constant time). */
export const verify = (secret: string, hashed: string): Effect.Effect<boolean> =>
  Effect.promise(async () => {
    const [name, iterations, salt, expected] = hashed.split("$")
    if (name !== scheme || iterations === undefined || salt === undefined || expected === undefined)
      return false
    const actual = await derive(secret, fromBase64url(salt), Number(iterations))
    const wanted = fromBase64url(expected)
    let difference = actual.length ^ wanted.length
    for (let i = 0; i < actual.length; i++) difference |= (actual[i] ?? 0) ^ (wanted[i] ?? 0)
    return difference === 0
  })

/**
 * A hash no secret is known to match, checked for an unknown name with the iterations of the
 * configured hashes, so that a wrong name costs what a wrong secret does.
 */
const decoyFor = (registry: Registry): string =>
  `${scheme}$${iterationsOf(registry)}$${"A".repeat(22)}$${"A".repeat(43)}`

/** The operator `name` when `secret` is theirs. */
export const authenticate = (
  registry: Registry,
  name: string,
  secret: string
): Effect.Effect<Option.Option<Operator>> =>
  Effect.gen(function* () {
    const entry = registry.operators.get(name.toLowerCase())
    const hashed = entry?.secret ?? decoyFor(registry)
    const ok = yield* verify(secret, hashed)
    return ok && entry !== undefined
      ? Option.some<Operator>({
          name: entry.name,
          role: entry.role,
          via: "operator",
          ...(entry.merchants === undefined ? {} : { merchants: entry.merchants })
        })
      : Option.none()
  })

/** The iterations the configured hashes use (the first one's), so a decoy costs the same. */
const iterationsOf = (registry: Registry): string => {
  for (const entry of registry.operators.values())
    return entry.secret.split("$")[1] ?? String(defaultIterations)
  return String(defaultIterations)
}

/**
 * A bearer token of its own, limited to merchants (issue 32): a merchant's backend calls the
 * intake with it, as the platform's machines call it with `TILLFLOW_INTAKE_TOKEN`. Only the
 * token's SHA-256 is configured (a token is long and random: a slow hash adds nothing).
 */
export const TokenEntry = Schema.Struct({
  name: OperatorEntry.fields.name,
  role: Role,
  merchants: Schema.Array(MerchantId).pipe(Schema.minItems(1)),
  sha256: Schema.String.pipe(
    Schema.pattern(/^[0-9a-f]{64}$/, {
      message: () =>
        'sha256 must be the token\'s SHA-256 in lower-case hexadecimal (`printf %s "$TOKEN" | sha256sum`), never the token itself'
    })
  )
})
/** @see TokenEntry */
export type TokenEntry = typeof TokenEntry.Type

/** The configured merchant tokens, by their SHA-256. */
export interface Tokens {
  readonly bySha256: ReadonlyMap<string, Operator>
}

/** No merchant token configured. */
export const noTokens: Tokens = { bySha256: new Map() }

/** The merchant tokens of a JSON array (`TILLFLOW_INTAKE_TOKENS`): each `{name, role, merchants, sha256}`. */
export const parseTokens = (text: string): Either.Either<Tokens, InvalidOperators> => {
  const decoded = entriesOf(
    TokenEntry,
    text,
    `[{"name", "role", "merchants" (ids), "sha256" (of the token)}]`
  )
  if (Either.isLeft(decoded)) return Either.left(decoded.left)
  const bySha256 = new Map<string, Operator>()
  const names = new Set<string>()
  for (const entry of decoded.right) {
    if (names.has(entry.name.toLowerCase()) || bySha256.has(entry.sha256)) {
      return Either.left(new InvalidOperators({ message: `token "${entry.name}" is configured twice` }))
    }
    names.add(entry.name.toLowerCase())
    bySha256.set(entry.sha256, {
      name: entry.name,
      role: entry.role,
      via: "token",
      merchants: entry.merchants
    })
  }
  return Either.right({ bySha256 })
}
