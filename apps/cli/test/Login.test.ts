/**
 * `tillflow login` / `logout` as named operators run them, against a worker (a process) with
 * operators configured: a viewer's session saved in the user's configuration folder (mode
 * 0600, without the secret) is refused an action as "forbidden" naming the role, exit 8 (a
 * JSON error naming it under `--json`), never "unavailable"; an operator's session (from
 * `--print-session`, through `TILLFLOW_OPERATOR_SESSION`) acts, recorded in the timeline
 * with the operator's name; a session logged out is refused and forgotten. The secret is
 * never printed, nor written.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Operators } from "@tillflow/console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Bin from "./support/Bin.js"
import * as Worker from "./support/Worker.js"

const buildDir = Bin.testBuildDir()
const serial = "0404090209"
const secrets = { ana: "ana-secret-4f1c9b", vic: "vic-secret-7d2e0a" } as const
let worker: Worker.TestWorker
let home: string

beforeAll(async () => {
  const registry = await Effect.runPromise(
    Effect.all([
      Effect.map(Operators.hash(secrets.ana, 1000), (secret) => ({ name: "ana", role: "operator", secret })),
      Effect.map(Operators.hash(secrets.vic, 1000), (secret) => ({ name: "vic", role: "viewer", secret }))
    ])
  )
  // The configuration is checked as the worker will read it.
  Either.getOrThrow(Operators.parse(JSON.stringify(registry)))
  home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-cli-login-"))
  // On the embedded store even when DATABASE_URL is set: a second worker on the shared
  // database would claim the other test files' executions.
  worker = await Worker.start(buildDir, { TILLFLOW_OPERATORS: JSON.stringify(registry), DATABASE_URL: "" })
}, 240_000)

afterAll(async () => {
  await worker?.stop()
  Fs.rmSync(buildDir, { recursive: true, force: true })
  if (home !== undefined) Fs.rmSync(home, { recursive: true, force: true })
}, 60_000)

/** `tillflow <args>` as a person without the intake's token, whose configuration folder is `config`. */
const asPerson = (config: string, args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
  worker.cli(args, { TILLFLOW_INTAKE_TOKEN: "", XDG_CONFIG_HOME: config, ...extra })

/** A sale made with the intake's token: its guid. */
const sale = async (amount: string) => {
  const run = await worker.cli(["sale", "--serial", serial, "--amount", amount, "--json"], {
    XDG_CONFIG_HOME: Path.join(home, "machine")
  })
  expect(run.status, run.stderr).toBe(0)
  return String((JSON.parse(run.stdout) as Record<string, unknown>)["transactionId"])
}

const act = (guid: string, action: ReadonlyArray<string>) => [
  "transactions",
  "act",
  guid,
  ...action,
  "--reason",
  "the customer returned the goods",
  "--yes"
]

describe("tillflow login as a named operator", () => {
  it("a viewer's session is saved 0600 without the secret; its action is forbidden naming the role (exit 8), nothing started", async () => {
    const config = Path.join(home, "vic")
    const guid = await sale("12.00")
    const login = await asPerson(config, ["login", "--worker", worker.url, "--operator", "vic"], {
      TILLFLOW_OPERATOR_SECRET: secrets.vic
    })
    expect(login.status, login.stderr).toBe(0)
    expect(login.stdout).toContain(`logged in to ${worker.url} as vic (viewer)`)
    expect(login.stdout + login.stderr).not.toContain(secrets.vic)
    const file = Path.join(config, "tillflow", "sessions.json")
    expect(Fs.statSync(file).mode & 0o777).toBe(0o600)
    const saved = Fs.readFileSync(file, "utf8")
    expect(saved).not.toContain(secrets.vic)
    expect(JSON.parse(saved)).toMatchObject({
      sessions: {
        [worker.url]: { operator: "vic", role: "viewer", session: expect.stringMatching(/^[0-9a-f]{64}$/) }
      }
    })

    const executions = async () => {
      const run = await asPerson(config, ["executions", "list", "--json"])
      expect(run.status, run.stderr).toBe(0)
      return (JSON.parse(run.stdout) as { executions: ReadonlyArray<unknown> }).executions.length
    }
    // A viewer reads.
    const before = await executions()
    const refund = ["--action", "refund", "--amount", "1.00", "--currency", "EUR"]
    const refused = await asPerson(config, act(guid, refund))
    expect(refused.status, refused.stderr).toBe(8)
    expect(refused.stderr).toContain(`tillflow: forbidden: viewer may not refund transaction ${guid}`)
    expect(refused.stderr).not.toMatch(/unavailable|did not answer|unexpected answer/i)
    const asJson = await asPerson(config, [...act(guid, refund), "--json"])
    expect(asJson.status).toBe(8)
    expect(JSON.parse(asJson.stdout)).toMatchObject({ error: "Forbidden", role: "viewer" })
    expect(asJson.stdout + asJson.stderr + refused.stdout + refused.stderr).not.toContain(secrets.vic)
    expect(await executions()).toBe(before)
  }, 240_000)

  it("an operator's session acts, recorded with the operator's name; logged out, it is refused and forgotten", async () => {
    const config = Path.join(home, "ana")
    const guid = await sale("13.00")
    const login = await asPerson(
      config,
      ["login", "--worker", worker.url, "--operator", "ana", "--print-session"],
      {
        TILLFLOW_OPERATOR_SECRET: secrets.ana
      }
    )
    expect(login.status, login.stderr).toBe(0)
    const session = login.stdout.trim()
    expect(session).toMatch(/^[0-9a-f]{64}$/)
    expect(login.stdout + login.stderr).not.toContain(secrets.ana)
    expect(Fs.existsSync(Path.join(config, "tillflow", "sessions.json"))).toBe(false)

    const env = { TILLFLOW_OPERATOR_SESSION: session }
    // The session goes before the intake's token, when both are there.
    const reversed = await asPerson(config, [...act(guid, ["--action", "reverse"]), "--json", "--verbose"], {
      ...env,
      TILLFLOW_INTAKE_TOKEN: Worker.token
    })
    expect(reversed.status, reversed.stderr).toBe(0)
    expect(reversed.stderr).toContain("as the operator of TILLFLOW_OPERATOR_SESSION")
    const executionId = String((JSON.parse(reversed.stdout) as Record<string, unknown>)["executionId"])
    const timeline = await asPerson(config, ["audit", "timeline", executionId], env)
    expect(timeline.status, timeline.stderr).toBe(0)
    expect(timeline.stdout).toContain("reverse asked by operator ana: the customer returned the goods")

    const logout = await asPerson(config, ["logout", "--worker", worker.url], env)
    expect(logout.status, logout.stderr).toBe(0)
    expect(logout.stdout).toContain(`logged the operator of TILLFLOW_OPERATOR_SESSION out of ${worker.url}`)
    const after = await asPerson(config, ["executions", "list"], env)
    expect(after.status).toBe(2)
    expect(after.stderr).toContain("does not know the session of TILLFLOW_OPERATOR_SESSION")
    // Without a session or the token, the worker cannot be talked to.
    const none = await asPerson(config, ["executions", "list"])
    expect(none.status).toBe(1)
    expect(none.stderr).toContain(`tillflow login --worker ${worker.url} --operator NAME`)
  }, 240_000)

  it("through a worker, a resolution is in the logged-in operator's name by default; --operator is said not to be recorded for an action", async () => {
    const config = Path.join(home, "ana-saved")
    const guid = await sale("14.00")
    const login = await asPerson(config, ["login", "--worker", worker.url, "--operator", "ana"], {
      TILLFLOW_OPERATOR_SECRET: secrets.ana
    })
    expect(login.status, login.stderr).toBe(0)
    const resolve = (extra: ReadonlyArray<string>, env: Record<string, string> = {}) =>
      asPerson(
        config,
        [
          "transactions",
          "resolve",
          guid,
          "--request",
          "req-none",
          "--applied",
          "--reason",
          "checked",
          ...extra
        ],
        env
      )
    // Without --operator: the session's operator, so the worker answers with the rule, not the name.
    const mine = await resolve([])
    expect(mine.status).not.toBe(0)
    expect(mine.stderr).not.toContain("--operator")
    expect(mine.stderr).not.toContain("in the name of the operator logged in")
    // Another name: refused here, before anything is sent.
    const other = await resolve(["--operator", "bob"])
    expect(other.status).toBe(2)
    expect(other.stderr).toContain(
      "--operator bob: a worker records a resolution in the name of the operator logged in (ana)"
    )
    // With the token, which names no one: the name is needed.
    const byToken = await worker.cli(
      ["transactions", "resolve", guid, "--request", "req-none", "--applied", "--reason", "checked"],
      { XDG_CONFIG_HOME: Path.join(home, "machine") }
    )
    expect(byToken.status).toBe(2)
    expect(byToken.stderr).toContain("--operator: name who resolves it")
    // An action's --operator is not what a worker records: said.
    const acted = await asPerson(config, [
      ...act(guid, ["--action", "refund", "--amount", "1.00", "--currency", "EUR"]),
      "--operator",
      "bob"
    ])
    expect(acted.status, acted.stderr).toBe(0)
    expect(acted.stderr).toContain(
      "--operator bob is not recorded by a worker: it records the operator logged in, ana"
    )
  }, 240_000)

  it("the secret is never an argument: without one, login is a usage error", async () => {
    const run = await asPerson(Path.join(home, "nobody"), [
      "login",
      "--worker",
      worker.url,
      "--operator",
      "ana"
    ])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("no secret for ana: set TILLFLOW_OPERATOR_SECRET")
  }, 120_000)
})
