/**
 * `tillflow merchants list` through a running worker (`--worker`, `TILLFLOW_WORKER_URL`, or
 * the worker holding the embedded store): the worker's `GET /v1/merchants`, printed as the
 * store's list is — the merchants and their keys' ids and states, never a key.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Bin from "./support/Bin.js"
import * as Worker from "./support/Worker.js"

const buildDir = Bin.testBuildDir()
const apiKey = "sk_live_cli_worker_0f1e2d3c4b5a69788796"
let worker: Worker.TestWorker

beforeAll(async () => {
  // On the embedded store even when DATABASE_URL is set: the registry is the worker's own.
  worker = await Worker.start(buildDir, {
    DATABASE_URL: "",
    TILLFLOW_KEK: `kek-cli:${btoa(String.fromCharCode(...new Uint8Array(32).fill(4)))}`
  })
}, 240_000)

afterAll(async () => {
  await worker?.stop()
  Fs.rmSync(buildDir, { recursive: true, force: true })
}, 60_000)

const api = async (path: string, body: unknown) => {
  const reply = await fetch(`${worker.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${Worker.token}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  expect(reply.status, await reply.clone().text()).toBe(200)
  return (await reply.json()) as Record<string, unknown>
}

describe("tillflow merchants list through a worker", () => {
  it("lists the worker's merchants and their keys' ids, never a key", async () => {
    await api("/v1/merchants", { id: "m-cli", name: "Café CLI", mcc: "5812" })
    const key = await api("/v1/merchants/m-cli/keys", { kind: "partner", key: apiKey })
    const keyId = String(key["keyId"])

    const json = await worker.cli(["merchants", "list", "--json"])
    expect(json.status, json.stderr).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({
      merchants: [{ id: "m-cli", name: "Café CLI", enabled: true, keys: [{ keyId, kind: "partner" }] }]
    })
    const text = await worker.cli(["merchants", "list", "--worker", worker.url])
    expect(text.status, text.stderr).toBe(0)
    expect(text.stdout).toContain("m-cli  Café CLI  MCC 5812  enabled")
    expect(text.stdout).toContain(`${keyId}  partner  active`)
    expect(json.stdout + json.stderr + text.stdout + text.stderr).not.toContain(apiKey)
  }, 120_000)
})
