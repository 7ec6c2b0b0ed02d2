/**
 * Writes the intake API's OpenAPI document (the one `GET /openapi.json` serves) to a file,
 * for the linter: `npx tsx --conditions=@tillflow/source scripts/openapi.ts build/openapi.json`.
 */
import { IntakeApi } from "@tillflow/intake"
import * as OpenApi from "@effect/platform/OpenApi"
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"

const target = process.argv[2] ?? "build/openapi.json"
mkdirSync(dirname(target), { recursive: true })
writeFileSync(target, JSON.stringify(OpenApi.fromApi(IntakeApi.IntakeApi), null, 2) + "\n")
console.log(`wrote ${target}`)
