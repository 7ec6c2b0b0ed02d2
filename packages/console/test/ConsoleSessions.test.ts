import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as ConsoleHttp from "../src/ConsoleHttp.js"
import * as ConsoleSessions from "../src/ConsoleSessions.js"

const token = Redacted.make("the-intake-token-of-this-test")

describe("ConsoleSessions", () => {
  it.effect("the intake's token opens a session; any other token opens none", () =>
    Effect.gen(function* () {
      const sessions = ConsoleSessions.make(token)
      expect(yield* sessions.login("the-intake-token-of-this-tesT")).toBeUndefined()
      expect(yield* sessions.login("")).toBeUndefined()
      const id = yield* sessions.login("the-intake-token-of-this-test")
      expect(id).toMatch(/^[0-9a-f]{64}$/)
      expect(yield* sessions.check(id ?? "")).toBe(true)
      // Two logins are two sessions.
      expect(yield* sessions.login("the-intake-token-of-this-test")).not.toBe(id)
    })
  )

  it.effect("a session ends at logout, and by itself once its time is over", () =>
    Effect.gen(function* () {
      let now = 1_000_000
      const sessions = ConsoleSessions.make(token, () => now)
      const first = (yield* sessions.login("the-intake-token-of-this-test")) ?? ""
      const second = (yield* sessions.login("the-intake-token-of-this-test")) ?? ""
      yield* sessions.logout(first)
      expect(yield* sessions.check(first)).toBe(false)
      expect(yield* sessions.check(second)).toBe(true)
      now += Duration.toMillis(ConsoleSessions.ttl) - 1
      expect(yield* sessions.check(second)).toBe(true)
      now += 1
      expect(yield* sessions.check(second)).toBe(false)
    })
  )

  it.effect("an id of the wrong shape is no session (and is not even looked up)", () =>
    Effect.gen(function* () {
      const sessions = ConsoleSessions.make(token)
      for (const id of ["", "abc", "Z".repeat(64), `${"a".repeat(64)}; x`])
        expect(yield* sessions.check(id)).toBe(false)
    })
  )
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
