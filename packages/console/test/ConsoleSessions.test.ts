import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as ConsoleHttp from "../src/ConsoleHttp.js"
import * as ConsoleSessions from "../src/ConsoleSessions.js"
import * as LoginLimiter from "../src/LoginLimiter.js"
import * as Operators from "../src/Operators.js"

const token = Redacted.make("the-intake-token-of-this-test")

const client = "127.0.0.1"
const tokenLogin = (secret: string) => ({ secret })
const idOf = (result: ConsoleSessions.LoginResult): string => (result._tag === "LoggedIn" ? result.id : "")

describe("ConsoleSessions", () => {
  it.effect(
    "without operators, the intake's token opens a session as the shared token admin; any other token opens none",
    () =>
      Effect.gen(function* () {
        const sessions = ConsoleSessions.make(token)
        expect(sessions.named).toBe(false)
        expect((yield* sessions.login(tokenLogin("the-intake-token-of-this-tesT"), client))._tag).toBe(
          "Refused"
        )
        expect((yield* sessions.login(tokenLogin(""), client))._tag).toBe("Refused")
        const result = yield* sessions.login(tokenLogin("the-intake-token-of-this-test"), client)
        expect(idOf(result)).toMatch(/^[0-9a-f]{64}$/)
        expect(yield* sessions.check(idOf(result))).toEqual(Option.some(Operators.tokenOperator))
        // Two logins are two sessions.
        expect(idOf(yield* sessions.login(tokenLogin("the-intake-token-of-this-test"), client))).not.toBe(
          idOf(result)
        )
      })
  )

  it.effect("a session ends at logout, and by itself once its time is over", () =>
    Effect.gen(function* () {
      let now = 1_000_000
      const sessions = ConsoleSessions.make(token, Operators.none, () => now)
      const first = idOf(yield* sessions.login(tokenLogin("the-intake-token-of-this-test"), client))
      const second = idOf(yield* sessions.login(tokenLogin("the-intake-token-of-this-test"), client))
      yield* sessions.logout(first)
      expect(Option.isSome(yield* sessions.check(first))).toBe(false)
      expect(Option.isSome(yield* sessions.check(second))).toBe(true)
      now += Duration.toMillis(ConsoleSessions.ttl) - 1
      expect(Option.isSome(yield* sessions.check(second))).toBe(true)
      now += 1
      expect(Option.isSome(yield* sessions.check(second))).toBe(false)
    })
  )

  it.effect("an id of the wrong shape is no session (and is not even looked up)", () =>
    Effect.gen(function* () {
      const sessions = ConsoleSessions.make(token)
      for (const id of ["", "abc", "Z".repeat(64), `${"a".repeat(64)}; x`])
        expect(yield* sessions.check(id)).toEqual(Option.none())
    })
  )

  it.effect(
    "with operators configured, a session is an operator's (name, role), the shared token opens none, and a name is needed",
    () =>
      Effect.gen(function* () {
        const registry = yield* operators([
          { name: "ana", role: "operator", secret: "ana's secret" },
          { name: "vic", role: "viewer", secret: "vic's secret" }
        ])
        const sessions = ConsoleSessions.make(token, registry)
        expect(sessions.named).toBe(true)
        const ana = yield* sessions.login({ name: "Ana", secret: "ana's secret" }, client)
        expect(ana._tag === "LoggedIn" && ana.operator).toEqual({
          name: "ana",
          role: "operator",
          via: "operator"
        })
        expect(yield* sessions.check(idOf(ana))).toEqual(
          Option.some({ name: "ana", role: "operator", via: "operator" })
        )
        const viewer = yield* sessions.login({ name: "vic", secret: "vic's secret" }, client)
        expect(viewer._tag === "LoggedIn" && viewer.operator.role).toBe("viewer")
        const wrong = yield* sessions.login({ name: "ana", secret: "vic's secret" }, client)
        expect(wrong).toEqual({
          _tag: "Refused",
          message:
            "wrong name or secret: log in with your operator name and secret (the intake's token is for machines)"
        })
        expect((yield* sessions.login(tokenLogin("the-intake-token-of-this-test"), client))._tag).toBe(
          "Refused"
        )
        expect((yield* sessions.login({ name: "nobody", secret: "ana's secret" }, client))._tag).toBe(
          "Refused"
        )
      })
  )

  it.effect(
    "five wrong logins for a name lock it out for 15 minutes (logged, counted), whoever tries; then it opens again",
    () =>
      Effect.gen(function* () {
        let now = 5_000_000
        const registry = yield* operators([{ name: "ana", role: "operator", secret: "right" }])
        const sessions = ConsoleSessions.make(token, registry, () => now)
        const lockouts = (yield* Metric.value(LoginLimiter.lockouts)).count
        for (let i = 1; i <= LoginLimiter.maxFailures - 1; i++) {
          expect((yield* sessions.login({ name: "ana", secret: `guess ${i}` }, `10.0.0.${i}`))._tag).toBe(
            "Refused"
          )
        }
        const fifth = yield* sessions.login({ name: "ana", secret: "guess 5" }, "10.0.0.5")
        expect(fifth).toMatchObject({
          _tag: "LockedOut",
          until: now + Duration.toMillis(LoginLimiter.lockout)
        })
        expect((yield* Metric.value(LoginLimiter.lockouts)).count).toBe(lockouts + 1)
        // Even the right secret, from anywhere, is refused unchecked while the lock-out lasts.
        now += Duration.toMillis(LoginLimiter.lockout) - 1
        expect((yield* sessions.login({ name: "ana", secret: "right" }, "10.9.9.9"))._tag).toBe("LockedOut")
        now += 1
        expect((yield* sessions.login({ name: "ana", secret: "right" }, "10.9.9.9"))._tag).toBe("LoggedIn")
      })
  )

  it.effect("five wrong logins from one address lock that address out, whatever names it tries", () =>
    Effect.gen(function* () {
      const sessions = ConsoleSessions.make(token)
      for (let i = 1; i < LoginLimiter.maxFailures; i++)
        expect((yield* sessions.login(tokenLogin(`guess ${i}`), "10.1.1.1"))._tag).toBe("Refused")
      expect((yield* sessions.login(tokenLogin("guess 5"), "10.1.1.1"))._tag).toBe("LockedOut")
      expect((yield* sessions.login(tokenLogin("the-intake-token-of-this-test"), "10.1.1.1"))._tag).toBe(
        "LockedOut"
      )
      // Another address is not locked out.
      expect((yield* sessions.login(tokenLogin("the-intake-token-of-this-test"), "10.2.2.2"))._tag).toBe(
        "LoggedIn"
      )
    })
  )
})

describe("Operators", () => {
  it.effect("a secret is stored as a salted PBKDF2 hash, verified in full, never kept in clear", () =>
    Effect.gen(function* () {
      const hashed = yield* Operators.hash("correct horse", 1000)
      expect(hashed).toMatch(/^pbkdf2-sha256\$1000\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
      expect(hashed).not.toContain("correct horse")
      expect(yield* Operators.hash("correct horse", 1000)).not.toBe(hashed)
      expect(yield* Operators.verify("correct horse", hashed)).toBe(true)
      expect(yield* Operators.verify("correct horsE", hashed)).toBe(false)
      expect(yield* Operators.verify("correct horse", "plain text")).toBe(false)
    })
  )

  it("the configuration is refused with what was wrong: not JSON, a secret in clear, a role unknown, a name twice", () => {
    const fail = (text: string) => {
      const parsed = Operators.parse(text)
      return Either.isLeft(parsed) ? parsed.left.message : "accepted"
    }
    const hash = `pbkdf2-sha256$1000$${"a".repeat(22)}$${"b".repeat(43)}`
    expect(fail("{")).toContain("not JSON")
    expect(fail('[{"name":"ana","role":"operator","secret":"hunter2"}]')).toContain("never the secret itself")
    expect(fail(`[{"name":"ana","role":"root","secret":"${hash}"}]`)).toContain("viewer, operator or admin")
    expect(
      fail(
        `[{"name":"ana","role":"admin","secret":"${hash}"},{"name":"ANA","role":"viewer","secret":"${hash}"}]`
      )
    ).toBe('operator "ANA" is configured twice')
    expect(fail(`[{"name":"ana","role":"viewer","secret":"${hash}","merchants":["cafe sol"]}]`)).toContain(
      "a merchant id is 1 to 64 letters, digits, '.', '_' or '-'"
    )
    expect(fail(`[{"name":"ana","role":"admin","secret":"${hash}"}]`)).toBe("accepted")
    expect(fail(`[{"name":"ana","role":"viewer","secret":"${hash}","merchants":["cafe-sol"]}]`)).toBe(
      "accepted"
    )
  })

  it("roles are ordered: an admin may do what an operator may, an operator what a viewer may", () => {
    expect(Operators.allows("admin", "operator")).toBe(true)
    expect(Operators.allows("operator", "viewer")).toBe(true)
    expect(Operators.allows("viewer", "operator")).toBe(false)
    expect(Operators.allows("operator", "admin")).toBe(false)
  })
})

/** A registry of these operators, their secrets hashed (few iterations: a test). */
const operators = (
  entries: ReadonlyArray<{ readonly name: string; readonly role: Operators.Role; readonly secret: string }>
) =>
  Effect.gen(function* () {
    const hashed = yield* Effect.forEach(entries, (entry) =>
      Effect.map(Operators.hash(entry.secret, 1000), (secret) => ({ ...entry, secret }))
    )
    return Either.getOrThrow(Operators.parse(JSON.stringify(hashed)))
  })

describe("ConsoleHttp pages", () => {
  it("load scripts and styles from this origin only, with nothing inline", () => {
    for (const html of [ConsoleHttp.appPage, ConsoleHttp.loginPage]) {
      const scripts = html.match(/<script[^>]*>[^<]*<\/script>/g) ?? []
      expect(scripts.length).toBe(1)
      for (const script of scripts)
        expect(script).toMatch(/^<script type="module" src="\/console\/assets\/[a-z]+\.js"><\/script>$/)
      expect(html).not.toMatch(/ on[a-z]+=|style=|javascript:/i)
    }
    expect(ConsoleHttp.contentSecurityPolicy).toContain("script-src 'self'")
    expect(ConsoleHttp.contentSecurityPolicy).toContain("default-src 'none'")
    expect(ConsoleHttp.contentSecurityPolicy).not.toContain("unsafe")
  })

  it("set the session cookie HttpOnly, SameSite=Strict, for the whole origin; clear it at logout", () => {
    expect(ConsoleHttp.sessionCookie("ab12", false)).toBe(
      "tillflow_console=ab12; Path=/; HttpOnly; SameSite=Strict; Max-Age=28800"
    )
    expect(ConsoleHttp.sessionCookie("ab12", true)).toMatch(/; Secure$/)
    expect(ConsoleHttp.sessionCookie(undefined, false)).toContain("Max-Age=0")
  })
})
