/**
 * The merchant registry through the intake API (issue 32): an admin (or the bearer token)
 * lists, registers, disables and enables merchants, adds and retires their keys; a viewer's
 * and an operator's sessions are refused 403, reads included; an unknown merchant is 404, an
 * id taken 409, a bad field 400 naming it. A key sent is answered by its id, and appears in
 * no answer, no log line, no span attribute and no row of the store in plain text. Without a
 * key-encryption key (TILLFLOW_KEK) the worker's registry cannot be used (`Stack.merchantsLayer`):
 * every route answers 503 saying so.
 */
import { describe, expect, layer as layerOf } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { Operators } from "@tillflow/console"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Tracer from "effect/Tracer"
import { call, layerWith, send } from "./support.js"

const secretKey = "sk_live_merchant_m7_5f1d2c3b4a69788796a5b4c3d2e1f00"
const kek = `kek-test:${btoa(String.fromCharCode(...new Uint8Array(32).fill(9)))}`

/** `ada` (admin), `ana` (operator), `vic` (viewer), each with secret `<name>-secret`. */
const operators = await Effect.runPromise(
  Effect.gen(function* () {
    const entries = [
      { name: "ada", role: "admin" as const, secret: yield* Operators.hash("ada-secret", 1000) },
      { name: "ana", role: "operator" as const, secret: yield* Operators.hash("ana-secret", 1000) },
      { name: "vic", role: "viewer" as const, secret: yield* Operators.hash("vic-secret", 1000) }
    ]
    return Either.getOrThrow(Operators.parse(JSON.stringify(entries)))
  })
)

/** Every log record and every span of the served intake, as text. */
const records: Array<string> = []
const spans: Array<Tracer.Span> = []
const captured = Layer.merge(
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, message }) => {
      records.push(JSON.stringify({ message, ...Object.fromEntries(HashMap.toEntries(annotations)) }))
    })
  ),
  Layer.unwrapEffect(
    Effect.map(Effect.tracer, (native) =>
      Layer.setTracer(
        Tracer.make({
          span: (...args) => {
            const span = native.span(...args)
            spans.push(span)
            return span
          },
          context: native.context
        })
      )
    )
  )
)
const spanText = () =>
  JSON.stringify(spans.map((s) => ({ name: s.name, attributes: Object.fromEntries(s.attributes) })))

/** The environment the worker's layers read (`TILLFLOW_KEK` …): `env`, nothing else. */
const environment = (env: ReadonlyArray<readonly [string, string]>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(env)))

const login = (name: string) =>
  Effect.map(send("POST", "/console/login", { body: { name, secret: `${name}-secret` } }), (r) => r.cookie)

describe("the merchant registry through the intake API", () => {
  layerOf(
    layerWith({ operators }).pipe(Layer.provide(Layer.merge(captured, environment([["TILLFLOW_KEK", kek]])))),
    {
      timeout: 60_000,
      excludeTestServices: true
    }
  )((it) => {
    it.effect("an admin registers, lists, disables and enables a merchant; errors name what is wrong", () =>
      Effect.gen(function* () {
        const ada = yield* login("ada")
        const registered = yield* send("POST", "/v1/merchants", {
          cookie: ada,
          body: { id: "m-7", name: "Café Sol", mcc: "5812", virtualTerminal: "V-7" }
        })
        expect(registered.status).toBe(200)
        expect(registered.json).toMatchObject({
          id: "m-7",
          name: "Café Sol",
          mcc: "5812",
          enabled: true,
          keys: []
        })

        const taken = yield* send("POST", "/v1/merchants", {
          cookie: ada,
          body: { id: "m-7", name: "Again", mcc: "5812" }
        })
        expect(taken.status).toBe(409)
        expect(taken.json).toMatchObject({ _tag: "MerchantConflict", field: "id" })
        expect(taken.json?.["message"]).toContain("m-7 is already registered")

        const badMcc = yield* send("POST", "/v1/merchants", {
          cookie: ada,
          body: { id: "m-8", name: "X", mcc: "58" }
        })
        expect(badMcc.status).toBe(400)
        expect(badMcc.json?.["message"]).toContain("mcc: an MCC is 4 digits")

        const disabled = yield* send("POST", "/v1/merchants/m-7/disable", { cookie: ada })
        expect(disabled.status).toBe(200)
        expect(disabled.json).toMatchObject({ id: "m-7", enabled: false })
        const listed = yield* call("GET", "/v1/merchants")
        expect(listed.status).toBe(200)
        expect(listed.json).toEqual([
          expect.objectContaining({ id: "m-7", enabled: false, virtualTerminal: "V-7" })
        ])
        expect((yield* call("POST", "/v1/merchants/m-7/enable")).json).toMatchObject({ enabled: true })

        const unknown = yield* call("POST", "/v1/merchants/nobody/disable")
        expect(unknown.status).toBe(404)
        expect(unknown.json).toMatchObject({ _tag: "NotFound", message: "no merchant nobody" })
        expect((yield* call("POST", "/v1/merchants/nobody/keys/key-1/retire")).status).toBe(404)
        expect(
          (yield* call("POST", "/v1/merchants/nobody/keys", {
            body: JSON.stringify({ kind: "merchant", key: "k" })
          })).status
        ).toBe(404)
      })
    )

    it.effect(
      "a viewer's and an operator's sessions are refused every route (403 naming the role), reads included",
      () =>
        Effect.gen(function* () {
          for (const name of ["vic", "ana"]) {
            const cookie = yield* login(name)
            const role = name === "vic" ? "viewer" : "operator"
            for (const [method, path, body] of [
              ["GET", "/v1/merchants", undefined],
              ["POST", "/v1/merchants", { id: `m-${name}`, name: "X", mcc: "5812" }],
              ["POST", "/v1/merchants/m-7/disable", undefined],
              ["POST", "/v1/merchants/m-7/enable", undefined],
              ["POST", "/v1/merchants/m-7/keys", { kind: "merchant", key: "k-by-someone" }],
              ["POST", "/v1/merchants/m-7/keys/key-1/retire", undefined]
            ] as const) {
              const refused = yield* send(method, path, { cookie, ...(body === undefined ? {} : { body }) })
              expect(refused.status, `${name} ${method} ${path}`).toBe(403)
              expect(refused.json).toMatchObject({ _tag: "Forbidden", role })
            }
          }
          // Nothing they sent was registered.
          const listed = (yield* call("GET", "/v1/merchants")).json as ReadonlyArray<{ id: string }>
          expect(listed.map((m) => m.id)).not.toContain("m-ana")
        })
    )

    it.effect(
      "a key sent is answered by its id and appears in no answer, log, span or stored row; retired",
      () =>
        Effect.gen(function* () {
          yield* call("POST", "/v1/merchants", {
            body: JSON.stringify({ id: "m-9", name: "Key shop", mcc: "5411" })
          })
          const ada = yield* login("ada")
          const added = yield* send("POST", "/v1/merchants/m-9/keys", {
            cookie: ada,
            body: { kind: "merchant", key: secretKey }
          })
          expect(added.status).toBe(200)
          expect(added.json).toMatchObject({ kind: "merchant", state: "active", kek: "kek-test" })
          const keyId = String(added.json?.["keyId"])
          expect(keyId).toMatch(/^key-/)

          // A refused key (the wrong kind, an unknown field) does not echo the key either.
          const refused = yield* call("POST", "/v1/merchants/m-9/keys", {
            body: JSON.stringify({ kind: "master", key: secretKey, extra: 1 })
          })
          expect(refused.status).toBe(400)
          const tooLong = yield* call("POST", "/v1/merchants/m-9/keys", {
            body: JSON.stringify({ kind: "merchant", key: secretKey.repeat(200) })
          })
          expect(tooLong.status).toBe(400)
          expect(tooLong.json?.["message"]).toContain("key: an API key is at most 4096 characters")

          const listed = yield* call("GET", "/v1/merchants")
          expect(listed.json).toContainEqual(
            expect.objectContaining({
              id: "m-9",
              keys: [expect.objectContaining({ keyId, state: "active" })]
            })
          )
          const retired = yield* call("POST", `/v1/merchants/m-9/keys/${keyId}/retire`)
          expect(retired.status).toBe(200)
          expect(retired.json).toMatchObject({ keyId, state: "retired" })
          expect(typeof retired.json?.["retiredAt"]).toBe("number")
          expect((yield* call("POST", "/v1/merchants/m-9/keys/key-nope/retire")).status).toBe(404)

          for (const text of [added.text, refused.text, tooLong.text, listed.text, retired.text]) {
            expect(text).not.toContain(secretKey)
          }
          // The admin's changes are logged, by whom and which key: never the key.
          expect(records.join("\n")).toContain(`merchant m-9: merchant key ${keyId} added`)
          expect(records.join("\n")).not.toContain(secretKey)
          expect(spans.length).toBeGreaterThan(0)
          expect(spanText()).not.toContain(secretKey)

          // Every row of every table of the store (events included), as text.
          const sql = yield* SqlClient.SqlClient
          const tables = yield* sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
          expect(tables.map((t) => t.table_name)).toContain("tillflow_merchant_keys")
          for (const { table_name } of tables) {
            const rows = yield* sql.unsafe<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`)
            for (const { row } of rows) expect(row, table_name).not.toContain(secretKey)
          }
        })
    )
  })

  layerOf(layerWith({ operators }).pipe(Layer.provide(environment([]))), {
    timeout: 60_000,
    excludeTestServices: true
  })((it) => {
    it.effect("without TILLFLOW_KEK every route answers 503 saying so, never 404 or 500", () =>
      Effect.gen(function* () {
        for (const [method, path, body] of [
          ["GET", "/v1/merchants", undefined],
          ["POST", "/v1/merchants", { id: "m-1", name: "X", mcc: "5812" }],
          ["POST", "/v1/merchants/m-1/disable", undefined],
          ["POST", "/v1/merchants/m-1/enable", undefined],
          ["POST", "/v1/merchants/m-1/keys", { kind: "merchant", key: "k" }],
          ["POST", "/v1/merchants/m-1/keys/key-1/retire", undefined]
        ] as const) {
          const reply = yield* call(method, path, body === undefined ? {} : { body: JSON.stringify(body) })
          expect(reply.status, `${method} ${path}`).toBe(503)
          expect(reply.json).toMatchObject({ _tag: "Unavailable" })
          expect(reply.json?.["message"]).toContain("TILLFLOW_KEK")
        }
        // A viewer is still refused first: the role is checked before the registry.
        const vic = yield* login("vic")
        expect((yield* send("GET", "/v1/merchants", { cookie: vic })).status).toBe(403)
      })
    )
  })
})
