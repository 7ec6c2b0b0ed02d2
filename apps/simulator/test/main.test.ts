import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")

describe("apps/simulator", () => {
  it.live(
    "prints one JSON line first, serves /devices with the printed key, and exits on SIGTERM",
    () =>
      Effect.acquireUseRelease(
        Effect.sync(() =>
          // node itself (tsx as a loader), so SIGTERM reaches the simulator and no wrapper.
          spawn(
            process.execPath,
            [
              "--conditions=@tillflow/source",
              "--import",
              "tsx",
              "apps/simulator/src/main.ts",
              "--port",
              "0",
              "--seed",
              "3"
            ],
            {
              cwd: root,
              env: { ...process.env, TILLFLOW_SIM_API_KEY: "key-from-env" },
              stdio: ["ignore", "pipe", "pipe"]
            }
          )
        ),
        (child) =>
          Effect.gen(function* () {
            const firstLine = yield* Effect.async<string, Error>((resume) => {
              let buffer = ""
              child.stdout.setEncoding("utf8")
              child.stdout.on("data", (chunk: string) => {
                buffer += chunk
                const newline = buffer.indexOf("\n")
                if (newline >= 0) resume(Effect.succeed(buffer.slice(0, newline)))
              })
              child.on("exit", (code) => resume(Effect.fail(new Error(`exited early with ${code}`))))
            })
            const info = JSON.parse(firstLine)
            expect(Object.keys(info).sort()).toEqual([
              "adminUrl",
              "apiKey",
              "baseUrl",
              "terminals",
              "transactionsUrl"
            ])
            expect(info.apiKey).toBe("key-from-env")
            expect(info.transactionsUrl).toBe(`${info.baseUrl}/_status-host`)
            expect(info.terminals.length).toBeGreaterThanOrEqual(3)
            const devices = yield* Effect.promise(() =>
              fetch(`${info.baseUrl}/devices`, { headers: { ApiKeyCloud: info.apiKey } }).then(async (r) => ({
                status: r.status,
                body: (await r.json()) as Array<{ serial_number: string }>
              }))
            )
            expect(devices.status).toBe(200)
            expect(devices.body.map((d) => d.serial_number)).toEqual(
              info.terminals.map((t: { serial_number: string }) => t.serial_number)
            )
            const exited = yield* Effect.async<number | null>((resume) => {
              child.on("exit", (code) => resume(Effect.succeed(code)))
              child.kill("SIGTERM")
            }).pipe(Effect.timeout("10 seconds"))
            // Interrupted by the signal, the runtime shuts the servers down and exits cleanly.
            expect(exited).toBe(0)
          }),
        (child) => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL"))
      ),
    30_000
  )
})
