/**
 * A wrong DATABASE_URL is said for what it is: the worker's start-up error carries
 * PostgreSQL's own reason (or the network's), one message per cause — a missing database,
 * a closed port, a value that is not a URL, an unknown role — and never the URL's password.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Net from "node:net"
import * as Processes from "./support/Processes.js"

const main = "apps/worker/src/main.ts"

const databaseUrl = (process.env["DATABASE_URL"] ?? "").trim()
const postgres = databaseUrl !== "" || process.env["TILLFLOW_REQUIRE_POSTGRES"] === "1"

/** A loopback port nothing listens on. */
const closedPort = Effect.promise(
  () =>
    new Promise<number>((resolve, reject) => {
      const server = Net.createServer()
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        server.close(() => resolve(port))
      })
    })
)

/** The worker's one-line start-up error for `url`, and its exit code. */
const startWith = (url: string) =>
  Effect.map(
    Processes.runToEnd(
      main,
      [],
      Processes.cleanEnv({
        DATABASE_URL: url,
        TILLFLOW_INTAKE_TOKEN: "startup-errors-test-token",
        TILLFLOW_INTAKE_PORT: "0",
        TILLFLOW_LOG_LEVEL: "None"
      }),
      120_000
    ),
    (run) => ({
      code: run.code,
      line: run.stderr.split("\n").find((l) => l.startsWith("tillflow worker:")) ?? run.stderr
    })
  )

const withUrl = (base: string, change: (url: URL) => void): string => {
  const url = new URL(base)
  change(url)
  return url.toString()
}

describe("the worker's start-up error for a wrong DATABASE_URL", () => {
  it.live(
    "a closed port and a value that is not a URL: each says what is wrong, the password never shown",
    () =>
      Effect.gen(function* () {
        const port = yield* closedPort
        const [closed, notUrl] = yield* Effect.all(
          [
            startWith(`postgres://tillflow:s3cret-pw@127.0.0.1:${port}/payments`),
            startWith("not a url with s3cret-pw")
          ],
          { concurrency: 2 }
        )
        expect(closed.code).toBe(1)
        expect(closed.line).toContain(`ECONNREFUSED 127.0.0.1:${port}`)
        expect(notUrl.code).toBe(1)
        expect(notUrl.line).toContain("DATABASE_URL is not a PostgreSQL URL")
        for (const run of [closed, notUrl]) expect(run.line).not.toContain("s3cret-pw")
        expect(closed.line).not.toEqual(notUrl.line)
      }),
    240_000
  )

  it.live.skipIf(!postgres)(
    "a missing database and an unknown role: PostgreSQL's own reason, distinct from the others",
    () =>
      Effect.gen(function* () {
        const [missing, role] = yield* Effect.all(
          [
            startWith(withUrl(databaseUrl, (url) => void (url.pathname = "/tillflow_no_such_database"))),
            startWith(
              withUrl(databaseUrl, (url) => {
                url.username = "tillflow_no_such_role"
                url.password = "s3cret-pw"
              })
            )
          ],
          { concurrency: 2 }
        )
        expect(missing.code).toBe(1)
        expect(missing.line).toContain('database "tillflow_no_such_database" does not exist')
        expect(role.code).toBe(1)
        // PostgreSQL says "role … does not exist", or with password authentication that it failed.
        expect(role.line).toMatch(
          /role "tillflow_no_such_role" does not exist|password authentication failed for user "tillflow_no_such_role"/
        )
        expect(role.line).not.toContain("s3cret-pw")
        expect(missing.line).not.toEqual(role.line)
      }),
    240_000
  )
})
