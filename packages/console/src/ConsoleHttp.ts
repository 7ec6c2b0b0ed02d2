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

/** The login page, with a fixed error line when a login was refused (no value is ever written in). */
const loginPageWith = (refused: boolean) =>
  page(
    "tillflow console: log in",
    "login.js",
    [
      '<main class="login" id="main">',
      "<h1>tillflow console</h1>",
      '<form id="login" method="post" action="/console/login">',
      '<label for="token">Intake token</label>',
      '<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>',
      '<p class="hint">The bearer token of the worker\'s intake API (TILLFLOW_INTAKE_TOKEN, or the one <code>npm start</code> printed).</p>',
      '<button type="submit">Log in</button>',
      `<p id="login-error" class="error" role="alert">${refused ? "Wrong token: use the intake's bearer token." : ""}</p>`,
      "</form>",
      "</main>"
    ].join("")
  )

/** The login page: the one thing a request without the credential gets. */
export const loginPage = loginPageWith(false)

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

const LoginBody = Schema.Struct({ token: Schema.String.pipe(Schema.maxLength(1000)) })

/** Whether the request carries a live session cookie. */
const hasSession = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const sessions = yield* ConsoleSessions.ConsoleSessions
  const id = request.cookies[ConsoleSessions.cookieName]
  return id !== undefined && (yield* sessions.check(id))
})

/**
 * The login: JSON `{token}` from the login page's script (answered in JSON), or the form
 * posted by a browser without script (answered with a redirect to the console, or the
 * login page saying the token was wrong).
 */
const login = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const sessions = yield* ConsoleSessions.ConsoleSessions
  if ((request.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) {
    const form = yield* HttpServerRequest.schemaBodyUrlParams(LoginBody).pipe(Effect.option)
    const id = form._tag === "Some" ? yield* sessions.login(form.value.token) : undefined
    if (id === undefined) return html(loginPageWith(true), 401)
    return HttpServerResponse.empty({
      status: 303,
      headers: { ...securityHeaders, location: basePath, "set-cookie": sessionCookie(id, isHttps(request)) }
    })
  }
  const body = yield* HttpServerRequest.schemaBodyJson(LoginBody).pipe(Effect.option)
  if (body._tag === "None") {
    return json(
      { _tag: "InvalidRequest", message: 'the body must be JSON {"token": "<the intake token>"}' },
      400
    )
  }
  const id = yield* sessions.login(body.value.token)
  if (id === undefined) {
    return json(
      { _tag: "Unauthorized", message: "wrong token: use the intake's bearer token (TILLFLOW_INTAKE_TOKEN)" },
      401
    )
  }
  return json({ ok: true }, 200, { "set-cookie": sessionCookie(id, isHttps(request)) })
})

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
          if (!(yield* hasSession)) return html(loginPage, 401)
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
    })
  )

/** The console's routes with the sessions from context, as a layer on the intake's router. */
export const layer = (options: Options = {}): Layer.Layer<never, never, ConsoleSessions.ConsoleSessions> =>
  routes(options)
