/**
 * The console on the worker's HTTP server: `GET /console` answers the console's page to a
 * browser holding a live session cookie, and the login page (401) to anyone else;
 * `POST /console/login` exchanges the intake's bearer token for that cookie (HttpOnly,
 * SameSite=Strict), `POST /console/logout` ends it. The page's script reads everything
 * through the intake API itself (`/v1/...`), which accepts the cookie as well as the bearer
 * token: the console has no route of its own for data. Every answer carries a strict
 * Content-Security-Policy (scripts and styles from this origin only, nothing inline, no
 * framing), and the pages are static: no value is ever written into their HTML.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as ConsoleAssets from "./ConsoleAssets.js"
import * as ConsoleSessions from "./ConsoleSessions.js"

/** Where the console is served. */
export const basePath = "/console"

/**
 * The Content-Security-Policy of every console answer: nothing but this origin's own
 * script, style and API, no inline script or style, no plugin, no frame, forms posting
 * only here.
 */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'"
].join("; ")

/** The headers every console answer carries. */
export const securityHeaders: Record<string, string> = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin"
}

const page = (title: string, script: string, body: string): string =>
  [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<link rel="icon" href="data:,">',
    `<title>${title}</title>`,
    `<link rel="stylesheet" href="${basePath}/assets/console.css">`,
    `<script type="module" src="${basePath}/assets/${script}"></script>`,
    "</head>",
    `<body>${body}</body>`,
    "</html>"
  ].join("\n")

/** The console's page: an empty shell its script fills. */
export const appPage = page(
  "tillflow console",
  "console.js",
  '<a class="skip" href="#main">Skip to content</a><div id="app"><p class="loading">Loading…</p></div>'
)

/** Why the login page is shown again: a fixed line each (no value is ever written in). */
type LoginError = "none" | "refused" | "locked"

/**
 * The login page: the intake's token, or (with operators configured) an operator's name and
 * secret; with a fixed error line when a login was refused.
 */
const loginPageWith = (named: boolean, error: LoginError) =>
  page(
    "tillflow console: log in",
    "login.js",
    [
      '<main class="login" id="main">',
      "<h1>tillflow console</h1>",
      '<form id="login" method="post" action="/console/login">',
      ...(named
        ? [
            '<label for="name">Operator name</label>',
            '<input id="name" name="name" type="text" autocomplete="username" required autofocus>',
            '<label for="token">Secret</label>',
            '<input id="token" name="token" type="password" autocomplete="current-password" required>',
            '<p class="hint">Your operator name and secret, as the worker\'s operators file configures them.</p>'
          ]
        : [
            '<label for="token">Intake token</label>',
            '<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>',
            '<p class="hint">The bearer token of the worker\'s intake API (TILLFLOW_INTAKE_TOKEN, or the one <code>npm start</code> printed).</p>'
          ]),
      '<button type="submit">Log in</button>',
      `<p id="login-error" class="error" role="alert">${
        error === "locked"
          ? "Too many wrong logins: try again in 15 minutes."
          : error === "refused"
            ? named
              ? "Wrong name or secret."
              : "Wrong token: use the intake's bearer token."
            : ""
      }</p>`,
      "</form>",
      "</main>"
    ].join("")
  )

/** The login page: the one thing a request without the credential gets. */
export const loginPage = loginPageWith(false, "none")

/** The login page of a console with named operators. */
export const namedLoginPage = loginPageWith(true, "none")

const html = (body: string, status: number) =>
  HttpServerResponse.text(body, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: { ...securityHeaders, "cache-control": "no-store" }
  })

const json = (body: unknown, status: number, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, {
    status,
    headers: { ...securityHeaders, "cache-control": "no-store", ...headers }
  })

/** The session cookie, or the header that clears it (`undefined`). */
export const sessionCookie = (sessionId: string | undefined, secure: boolean): string =>
  [
    `${ConsoleSessions.cookieName}=${sessionId ?? ""}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Strict",
    `Max-Age=${sessionId === undefined ? 0 : Math.floor(Duration.toSeconds(ConsoleSessions.ttl))}`,
    ...(secure ? ["Secure"] : [])
  ].join("; ")

const isHttps = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.headers["x-forwarded-proto"] === "https" || request.url.startsWith("https:")

const secretField = Schema.String.pipe(Schema.maxLength(1000))

/** A login: `{name, secret}` of an operator, or `{token}` (also `secret`) alone. */
const LoginBody = Schema.Struct({
  name: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  token: Schema.optional(secretField),
  secret: Schema.optional(secretField)
})

/** The operator of the request's live session cookie. */
const sessionOperator = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const sessions = yield* ConsoleSessions.ConsoleSessions
  const id = request.cookies[ConsoleSessions.cookieName]
  return id === undefined ? Option.none() : yield* sessions.check(id)
})

/** Whether the request carries a live session cookie. */
const hasSession = Effect.map(sessionOperator, Option.isSome)

/** The address the request came from (the lock-out's key). */
const clientOf = (request: HttpServerRequest.HttpServerRequest): string =>
  Option.getOrElse(request.remoteAddress, () => "unknown")

const credentialsOf = (body: typeof LoginBody.Type): ConsoleSessions.Credentials => ({
  name: body.name,
  secret: body.secret ?? body.token ?? ""
})

/** Seconds until `until` (epoch ms), at least 1. */
const secondsUntil = (until: number): number => Math.max(1, Math.ceil((until - Date.now()) / 1000))

/**
 * The login: JSON `{token}` or `{name, secret}` from the login page's script (answered in
 * JSON: 401 when refused, 429 with `Retry-After` when locked out), or the form posted by a
 * browser without script (answered with a redirect to the console, or the login page saying
 * why not).
 */
const login = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const sessions = yield* ConsoleSessions.ConsoleSessions
  const client = clientOf(request)
  if ((request.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) {
    const form = yield* HttpServerRequest.schemaBodyUrlParams(LoginBody).pipe(Effect.option)
    const result =
      form._tag === "Some"
        ? yield* sessions.login(credentialsOf(form.value), client)
        : ({ _tag: "Refused", message: "" } as const)
    if (result._tag === "LockedOut") return html(loginPageWith(sessions.named, "locked"), 429)
    if (result._tag === "Refused") return html(loginPageWith(sessions.named, "refused"), 401)
    return HttpServerResponse.empty({
      status: 303,
      headers: {
        ...securityHeaders,
        location: basePath,
        "set-cookie": sessionCookie(result.id, isHttps(request))
      }
    })
  }
  const body = yield* HttpServerRequest.schemaBodyJson(LoginBody).pipe(Effect.option)
  if (body._tag === "None") {
    return json(
      {
        _tag: "InvalidRequest",
        message: sessions.named
          ? 'the body must be JSON {"name": "<operator name>", "secret": "<secret>"}'
          : 'the body must be JSON {"token": "<the intake token>"}'
      },
      400
    )
  }
  const result = yield* sessions.login(credentialsOf(body.value), client)
  switch (result._tag) {
    case "LockedOut":
      return json({ _tag: "TooManyRequests", message: result.message }, 429, {
        "retry-after": String(secondsUntil(result.until))
      })
    case "Refused":
      return json({ _tag: "Unauthorized", message: result.message }, 401)
    case "LoggedIn":
      return json({ ok: true, operator: { name: result.operator.name, role: result.operator.role } }, 200, {
        "set-cookie": sessionCookie(result.id, isHttps(request))
      })
  }
})

/**
 * Who the session is (`GET /console/session`): its operator's name and role, and the
 * merchants it is limited to (absent: every merchant, the platform's), for the page to offer
 * only what the operator may do (the intake refuses the rest: 403).
 */
const session = Effect.map(sessionOperator, (operator) =>
  Option.isNone(operator)
    ? json({ _tag: "Unauthorized", message: "log in at /console first" }, 401)
    : json(
        {
          name: operator.value.name,
          role: operator.value.role,
          via: operator.value.via,
          ...(operator.value.merchants === undefined ? {} : { merchants: operator.value.merchants })
        },
        200
      )
)

const logout = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const sessions = yield* ConsoleSessions.ConsoleSessions
  const id = request.cookies[ConsoleSessions.cookieName]
  if (id !== undefined) yield* sessions.logout(id)
  return json({ ok: true }, 200, { "set-cookie": sessionCookie(undefined, isHttps(request)) })
})

/** Options of the console's routes. */
export interface Options {
  /** Where the built assets are (`ConsoleAssets.defaultDirectory` when absent). */
  readonly assetsDirectory?: string | undefined
}

/**
 * The console's routes on the intake's router (`HttpApiBuilder.Router`), with the sessions
 * in context (the same the intake's authentication accepts).
 */
export const routes = (options: Options = {}) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const sessions = yield* ConsoleSessions.ConsoleSessions
      const assets = yield* ConsoleAssets.load(options.assetsDirectory)
      const withSessions = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.provideService(effect, ConsoleSessions.ConsoleSessions, sessions)
      const shell = withSessions(
        Effect.gen(function* () {
          if (!(yield* hasSession)) return html(sessions.named ? namedLoginPage : loginPage, 401)
          if (assets.missing !== undefined) return html(ConsoleAssets.missingPage(assets.missing), 503)
          return html(appPage, 200)
        })
      )
      const asset = withSessions(
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const name = (request.url.split("?")[0] ?? "").slice(`${basePath}/assets/`.length)
          const file = assets.files.get(name)
          if (file === undefined) return json({ _tag: "NotFound", message: `no console asset ${name}` }, 404)
          if (!file.public && !(yield* hasSession)) {
            return json({ _tag: "Unauthorized", message: "log in at /console first" }, 401)
          }
          return HttpServerResponse.uint8Array(file.bytes, {
            contentType: file.contentType,
            headers: { ...securityHeaders, "cache-control": "no-cache" }
          })
        })
      )
      yield* router.get(basePath, shell)
      yield* router.get(`${basePath}/assets/*`, asset)
      yield* router.post(`${basePath}/login`, withSessions(login))
      yield* router.post(`${basePath}/logout`, withSessions(logout))
      yield* router.get(`${basePath}/session`, withSessions(session))
    })
  )

/** The console's routes with the sessions from context, as a layer on the intake's router. */
export const layer = (options: Options = {}): Layer.Layer<never, never, ConsoleSessions.ConsoleSessions> =>
  routes(options)
