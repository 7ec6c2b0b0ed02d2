import { describe, expect, it } from "@effect/vitest"
import * as OpenApi from "@effect/platform/OpenApi"
import { Lifecycles } from "@tillflow/core"
import { IntakeApi } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { call, layer } from "./support.js"

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

const document: Json = OpenApi.fromApi(IntakeApi.IntakeApi)

/** A schema with its `$ref` (to a component) followed. */
const resolve = (schema: Json): Json =>
  typeof schema?.$ref === "string"
    ? resolve(document.components.schemas[schema.$ref.replace("#/components/schemas/", "")])
    : schema

const operations = (): Array<{ readonly route: string; readonly op: Json }> =>
  Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op }))
  )

describe("the intake API's reference", () => {
  it("the generated document is written for the linter (build/openapi.json)", () => {
    mkdirSync("build", { recursive: true })
    writeFileSync("build/openapi.json", JSON.stringify(document, null, 2) + "\n")
    expect(document.openapi).toBe("3.1.0")
  })

  it("the document names the project's licence (MIT, as LICENSE says) for the linter's info-license rule", () => {
    expect(document.info.license).toEqual({ name: "MIT", url: "https://opensource.org/licenses/MIT" })
  })

  it("the sale request is typed: operation, serial_number, amount and currency required, no callbackUrl or token", () => {
    const start = resolve(
      document.paths["/v1/operations"].post.requestBody.content["application/json"].schema
    )
    const request = resolve(start.properties.request)
    expect(request.discriminator.propertyName).toBe("operation")
    const sale = resolve({ $ref: request.discriminator.mapping.sale })
    expect(sale.properties.operation.enum).toEqual(["sale"])
    expect(sale.required).toEqual(
      expect.arrayContaining(["operation", "serial_number", "amount", "currency"])
    )
    // Filled in by the intake when absent, so optional here.
    expect(sale.required).not.toContain("transactionReference")
    expect(sale.required).not.toContain("terminal_type")
    expect(Object.keys(sale.properties)).not.toContain("callbackUrl")
    expect(Object.keys(sale.properties)).not.toContain("token")
    // Every member of the union is one operation; a stop has its own route.
    const members: Array<string> = request.anyOf.map(
      (member: Json) => resolve(member).properties.operation.enum[0]
    )
    expect(members).toContain("preAuthorizationCapture")
    expect(members).not.toContain("stopCurrentTransaction")
    expect(Object.keys(request.discriminator.mapping).sort()).toEqual([...members].sort())
  })

  it("{workflow} is the enum of the lifecycle workflows, and each has its own payload schema", () => {
    const op = document.paths["/v1/lifecycle/{workflow}"].post
    const parameter = op.parameters.find((p: Json) => p.name === "workflow")
    const names = Lifecycles.workflows.map((w) => w.name)
    expect(resolve(parameter.schema).enum).toEqual(names)
    const payload = resolve(resolve(op.requestBody.content["application/json"].schema).properties.payload)
    const titles: Array<string> = payload.anyOf.map((member: Json) => resolve(member).title)
    expect(titles).toEqual(names)
    const capture = resolve(payload.anyOf[names.indexOf("PreAuthorization.Capture")])
    expect(capture.required).toEqual(expect.arrayContaining(["originalGuid", "amount"]))
    expect(capture.required).not.toContain("requestId")
  })

  it("every operation has a summary and every request, success and error body an example", () => {
    const missing: Array<string> = []
    for (const { route, op } of operations()) {
      if (typeof op.summary !== "string") missing.push(`${route}: summary`)
      const bodies = [
        ["request", op.requestBody?.content],
        ...Object.entries(op.responses as Record<string, Json>).map(([status, response]) => [
          status,
          response.content
        ])
      ] as const
      for (const [which, content] of bodies) {
        if (content === undefined) continue
        for (const media of Object.values(content as Record<string, Json>)) {
          // An error status may have several bodies (anyOf): each needs its example.
          const schema = resolve(media.schema)
          for (const body of (schema.anyOf as Array<Json> | undefined) ?? [schema]) {
            const examples = resolve(body).examples
            if (!Array.isArray(examples) || examples.length === 0) {
              missing.push(`${route} ${which}: ${body.$ref ?? "body"} has no example`)
            }
          }
        }
      }
    }
    expect(missing).toEqual([])
  })

  it.layer(layer, { timeout: 60_000 })((it) => {
    it.effect("the document and the reference page are served without a token; the API still needs one", () =>
      Effect.gen(function* () {
        const openapi = yield* call("GET", "/openapi.json", { token: null })
        expect(openapi.status).toBe(200)
        expect(openapi.json.paths["/v1/operations"].post.summary).toBe("Start a terminal operation")

        const page = yield* call("GET", "/docs", { token: null })
        expect(page.status).toBe(200)
        expect(page.contentType).toContain("text/html")
        expect(page.text).toContain("tillflow intake")
        // The page's script comes from the worker itself: nothing is fetched from a CDN.
        expect(page.text).toContain('<script src="/docs/scalar.js"></script>')
        expect(page.text).not.toMatch(/<script[^>]+src=["']https?:/)
        expect(page.text).toContain('"withDefaultFonts":false')
        const script = yield* call("GET", "/docs/scalar.js", { token: null })
        expect(script.status).toBe(200)
        expect(script.contentType).toContain("text/javascript")
        expect(script.text).toContain("@scalar/api-reference")
        expect(script.text.length).toBeGreaterThan(1_000_000)

        expect((yield* call("GET", "/v1/devices", { token: null })).status).toBe(401)
        expect((yield* call("GET", "/v1/executions", { token: "not-the-token" })).status).toBe(401)
        expect((yield* call("GET", "/metrics", { token: null })).status).toBe(401)
        expect((yield* call("GET", "/v1/devices")).status).toBe(200)
      })
    )
  })
})
