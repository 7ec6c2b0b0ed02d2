/**
 * Envelope encryption of the merchants' API keys at rest (issue 32): each key is sealed with
 * a data key of its own (AES-256-GCM, fresh for every seal), and that data key is wrapped by
 * a key-encryption key (KEK) the deployment holds outside the store. The store keeps only
 * the sealed form — the KEK's id, the wrapped data key, the ciphertext — so a dump of the
 * database holds no API key and no key that opens one.
 *
 * `KeyWrapper` is the port: a KMS (one call to wrap and unwrap a data key) can stand behind
 * it. `aesGcm` is the implementation over Web Crypto (`globalThis.crypto.subtle`, in Node and
 * browsers alike) with KEKs from the configuration (`TILLFLOW_KEK`, `TILLFLOW_KEK_PREVIOUS`):
 * it seals under the current KEK and opens under any it knows, so a KEK is rotated without
 * downtime — deploy the new one as current with the old as previous, `rewrap` every sealed
 * key (only the data keys are re-encrypted), then drop the old.
 *
 * A sealed key is bound to its `context` (the merchant and key id, say) as authenticated
 * data: copied onto another row it does not open. Errors never carry the secret.
 *
 * @example
 * const wrapper = yield* KeyWrapper.KeyWrapper
 * const sealed = yield* wrapper.seal(Redacted.make(apiKey), "merchant-7/key-1")
 * const key = yield* wrapper.open(sealed, "merchant-7/key-1") // Redacted<string>
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

/** A key sealed for the store: which KEK wrapped its data key, the wrapped data key, the ciphertext. */
export const Sealed = Schema.Struct({
  /** The form's version. */
  v: Schema.Literal(1),
  /** The id of the KEK that wrapped the data key. */
  kek: Schema.String,
  /** The data key, wrapped: base64 of the 12-byte IV and the AES-GCM output. */
  dek: Schema.String,
  /** The secret, sealed with the data key: base64 of the 12-byte IV and the AES-GCM output. */
  data: Schema.String
}).annotations({ identifier: "SealedKey" })
/** @see Sealed */
export type Sealed = typeof Sealed.Type

/** A key could not be sealed or opened: which step, and why (never the secret). */
export class KeyWrapperError extends Schema.TaggedError<KeyWrapperError>()("KeyWrapperError", {
  message: Schema.String
}) {}

/** The port. */
export interface Service {
  /** Seals `secret` under the current KEK, bound to `context`. */
  readonly seal: (
    secret: Redacted.Redacted<string>,
    context: string
  ) => Effect.Effect<Sealed, KeyWrapperError>
  /** Opens a sealed key with the KEK it names (current or previous), checking `context`. */
  readonly open: (
    sealed: Sealed,
    context: string
  ) => Effect.Effect<Redacted.Redacted<string>, KeyWrapperError>
  /** The same key with its data key wrapped by the current KEK (the ciphertext unchanged). */
  readonly rewrap: (sealed: Sealed) => Effect.Effect<Sealed, KeyWrapperError>
  /** The current KEK's id: a sealed key under another one is due for `rewrap`. */
  readonly currentKek: string
}

/** The key wrapper of the deployment. */
export class KeyWrapper extends Context.Tag("tillflow/KeyWrapper")<KeyWrapper, Service>() {}

/** A key-encryption key: its id and its 32 bytes. */
export interface Kek {
  readonly id: string
  readonly key: Redacted.Redacted<Uint8Array>
}

const toBase64 = (bytes: Uint8Array): string => {
  let text = ""
  for (const byte of bytes) text += String.fromCharCode(byte)
  return btoa(text)
}
const fromBase64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0))

const subtle = () => globalThis.crypto.subtle
type Key = Awaited<ReturnType<ReturnType<typeof subtle>["importKey"]>>
const aes = (raw: Uint8Array, usages: ReadonlyArray<"encrypt" | "decrypt">): Promise<Key> =>
  subtle().importKey("raw", raw, { name: "AES-GCM" }, false, [...usages])

const encrypt = async (key: Key, plain: Uint8Array, context: Uint8Array): Promise<string> => {
  const iv = globalThis.crypto.getRandomValues(new Uint8Array(12))
  const out = new Uint8Array(
    await subtle().encrypt({ name: "AES-GCM", iv, additionalData: context }, key, plain)
  )
  const joined = new Uint8Array(iv.length + out.length)
  joined.set(iv)
  joined.set(out, iv.length)
  return toBase64(joined)
}

const decrypt = async (key: Key, sealed: string, context: Uint8Array): Promise<Uint8Array> => {
  const bytes = fromBase64(sealed)
  return new Uint8Array(
    await subtle().decrypt(
      { name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: context },
      key,
      bytes.slice(12)
    )
  )
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** What the data key is bound to when wrapped: the KEK's id (a wrapped key moved under another id fails). */
const dekContext = (kek: string) => encoder.encode(`tillflow/dek/${kek}`)
const dataContext = (context: string) => encoder.encode(`tillflow/key/${context}`)

const attempt = <A>(what: string, run: () => Promise<A>): Effect.Effect<A, KeyWrapperError> =>
  Effect.tryPromise({
    try: run,
    // Web Crypto's errors say nothing of the inputs; ours say which step failed.
    catch: () =>
      new KeyWrapperError({ message: `${what} failed (wrong key-encryption key, tampered or moved data)` })
  })

/**
 * The wrapper over Web Crypto: seals under `current`, opens under `current` or any of
 * `previous` (by the id a sealed key names).
 */
export const aesGcm = (current: Kek, previous: ReadonlyArray<Kek> = []): Service => {
  const keks = new Map([current, ...previous].map((kek) => [kek.id, kek]))
  const kekOf = (id: string) =>
    Effect.suspend(() => {
      const kek = keks.get(id)
      return kek === undefined
        ? Effect.fail(
            new KeyWrapperError({
              message: `the key-encryption key ${id} is not configured (current ${current.id}${previous.length === 0 ? "" : `, previous ${previous.map((p) => p.id).join(", ")}`})`
            })
          )
        : Effect.succeed(kek)
    })
  const unwrapDek = (sealed: Sealed) =>
    Effect.flatMap(kekOf(sealed.kek), (kek) =>
      attempt("unwrapping the data key", async () =>
        decrypt(await aes(Redacted.value(kek.key), ["decrypt"]), sealed.dek, dekContext(kek.id))
      )
    )
  const wrapDek = (dek: Uint8Array) =>
    attempt("wrapping the data key", async () =>
      encrypt(await aes(Redacted.value(current.key), ["encrypt"]), dek, dekContext(current.id))
    )
  return {
    currentKek: current.id,
    seal: (secret, context) =>
      Effect.gen(function* () {
        const dek = globalThis.crypto.getRandomValues(new Uint8Array(32))
        const data = yield* attempt("sealing the key", async () =>
          encrypt(await aes(dek, ["encrypt"]), encoder.encode(Redacted.value(secret)), dataContext(context))
        )
        return { v: 1 as const, kek: current.id, dek: yield* wrapDek(dek), data }
      }),
    open: (sealed, context) =>
      Effect.gen(function* () {
        const dek = yield* unwrapDek(sealed)
        const plain = yield* attempt("opening the key", async () =>
          decrypt(await aes(dek, ["decrypt"]), sealed.data, dataContext(context))
        )
        return Redacted.make(decoder.decode(plain))
      }),
    rewrap: (sealed) =>
      sealed.kek === current.id
        ? Effect.succeed(sealed)
        : Effect.gen(function* () {
            const dek = yield* unwrapDek(sealed)
            return { ...sealed, kek: current.id, dek: yield* wrapDek(dek) }
          })
  }
}

/**
 * A KEK as the configuration gives it: `<id>:<base64 of 32 bytes>` (the id names it in every
 * sealed key: `kek-2026-11`, say).
 */
export const parseKek = (text: string): Either.Either<Kek, string> => {
  const at = text.indexOf(":")
  const id = at < 0 ? "" : text.slice(0, at).trim()
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(id))
    return Either.left(
      "a key-encryption key is <id>:<base64 of 32 bytes>, the id letters, digits, '.', '_' or '-'"
    )
  let key: Uint8Array
  try {
    key = fromBase64(text.slice(at + 1).trim())
  } catch {
    return Either.left(`key-encryption key ${id}: not base64`)
  }
  if (key.length !== 32)
    return Either.left(`key-encryption key ${id}: ${key.length} bytes where 32 are needed (AES-256)`)
  return Either.right({ id, key: Redacted.make(key) })
}

const kekConfig = (name: string) =>
  Config.redacted(name).pipe(
    Config.mapOrFail((value) =>
      Either.mapLeft(parseKek(Redacted.value(value)), (message) => ConfigError.InvalidData([name], message))
    )
  )

/**
 * The KEKs of the configuration: `TILLFLOW_KEK` (current), `TILLFLOW_KEK_PREVIOUS` (a
 * comma-separated list, while a rotation is under way).
 */
export const config: Config.Config<{ readonly current: Kek; readonly previous: ReadonlyArray<Kek> }> =
  Config.all({
    current: kekConfig("TILLFLOW_KEK"),
    previous: Config.redacted("TILLFLOW_KEK_PREVIOUS").pipe(
      Config.withDefault(Redacted.make("")),
      Config.mapOrFail((value) => {
        const parts = Redacted.value(value)
          .split(",")
          .map((p) => p.trim())
          .filter((p) => p !== "")
        const parsed = parts.map(parseKek)
        const bad = parsed.find(Either.isLeft)
        return bad !== undefined
          ? Either.left(ConfigError.InvalidData(["TILLFLOW_KEK_PREVIOUS"], bad.left))
          : Either.right(parsed.flatMap((p) => (Either.isRight(p) ? [p.right] : [])))
      })
    )
  })

/** The wrapper of the configuration's KEKs. */
export const layerConfig: Layer.Layer<KeyWrapper, ConfigError.ConfigError> = Layer.effect(
  KeyWrapper,
  Effect.map(config, ({ current, previous }) => aesGcm(current, previous))
)
