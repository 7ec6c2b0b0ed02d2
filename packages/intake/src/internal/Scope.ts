/**
 * What a credential limited to merchants may do (issue 32: a merchant's own staff or
 * backend, `Operators.Operator.merchants`). Deny by default: it may list its merchant's
 * terminals, start and stop its operations, list, search and follow its executions, ask
 * the status endpoint, act on and resolve its transactions, its terminal operations left
 * unresolved and its requests in doubt on a batch, MOTO sale or device
 * (`MerchantGate.ownAttempt`), read the service's view and the live stream scoped to it,
 * read the log, the ledger (totals and entries) and its operations' timelines scoped to it,
 * watch its terminals and its alerts and acknowledge and resolve its alerts, and nothing
 * else — the chain's verify, the ledger's rebuild, the metrics and the merchant registry
 * span every merchant and are the platform's. It acts for the merchant `Tillflow-Merchant`
 * names, which must be one of its own, or for its only merchant when the header is absent.
 * What an allowed route reaches by id or guid is checked against that merchant
 * (`MerchantGate`).
 *
 * The console of such an operator: `GET /v1/monitor/service` is allowed because its handler
 * answers a limited credential a view of its own (`Monitor.ownService`: the service's kind,
 * and the terminals of its merchant's own device list, never the simulator's every
 * terminal); the live stream is allowed because its handler sends such a credential only
 * the events whose metadata names its merchant as their tenant (`MonitorHttp.liveFor`:
 * deny by default, an event naming no merchant is not sent; the console names its merchant
 * there in the query, {@link namedMerchant}), and reloads from routes filtered here. Its
 * Alerts and Terminals pages read the monitor's routes, answered scoped (`Monitor`).
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type { Operators } from "@tillflow/console"
import * as Tenant from "@tillflow/engine/Tenant"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { Forbidden, InvalidRequest } from "../Intake.js"

/** The routes a limited credential may call: method and path. */
const allowed: ReadonlyArray<readonly [string, RegExp]> = [
  ["GET", /^\/v1\/devices$/],
  ["POST", /^\/v1\/operations$/],
  ["POST", /^\/v1\/terminals\/[^/]+\/stop$/],
  ["POST", /^\/v1\/lifecycle\/[^/]+$/],
  ["GET", /^\/v1\/executions$/],
  ["GET", /^\/v1\/monitor\/executions$/],
  // Answered scoped to the credential (`Monitor.ownService`), never the platform's view.
  ["GET", /^\/v1\/monitor\/service$/],
  // Only the events its merchant's executions wrote (`MonitorHttp.liveFor`).
  ["GET", /^\/v1\/monitor\/live$/],
  // Its device list's terminals, and on them its merchant's running operations only: the
  // list is read with its merchant's key, the operations filtered by their tenant
  // (`Monitor.terminals`).
  ["GET", /^\/v1\/monitor\/terminals$/],
  // Its merchant's alerts only: an alert is its execution's tenant's, one whose merchant
  // cannot be told (the deployment's own, a key the service refused) is no merchant's
  // (`Monitor.alerts`). Another merchant's alert id is not found, nothing stored, and a
  // step is stored in the credential's name, as the platform's are (`Monitor.acknowledge`).
  ["GET", /^\/v1\/monitor\/alerts$/],
  ["POST", /^\/v1\/monitor\/alerts\/[^/]+\/(acknowledge|resolve)$/],
  // Only the events, and the ledger's facts, whose metadata names its merchant as their
  // tenant (`Queries.events`, `Audit`: `Ledger.ofTenant`).
  ["GET", /^\/v1\/events$/],
  ["GET", /^\/v1\/audit\/ledger$/],
  ["GET", /^\/v1\/audit\/entries$/],
  // One of its operations' story: found among its merchant's only (`Timeline`).
  ["GET", /^\/v1\/audit\/timeline\/[^/]+$/],
  ["GET", /^\/v1\/executions\/[^/]+$/],
  ["GET", /^\/v1\/executions\/[^/]+\/history$/],
  ["POST", /^\/v1\/executions\/[^/]+\/retry$/],
  ["GET", /^\/v1\/transactions\/[^/]+\/status$/],
  ["POST", /^\/v1\/transactions\/[^/]+\/actions$/],
  ["POST", /^\/v1\/transactions\/[^/]+\/resolve$/],
  // A request in doubt on its batch, MOTO sale or device command, and its terminal
  // operation left unresolved: its own only (`MerchantGate.ownAttempt`, `ownExecution`).
  ["POST", /^\/v1\/attempts\/[^/]+\/[^/]+\/resolve$/]
]

/**
 * The merchant a request names: its `Tillflow-Merchant` header; for the live feed, which a
 * browser's `EventSource` opens without headers of its own, its `merchant` query parameter
 * when there is no header (`GET /v1/monitor/live?merchant=cafe-sol`, the console of an
 * operator limited to merchants). Checked as the header is, by {@link enforce}.
 */
export const namedMerchant = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const header = request.headers["tillflow-merchant"]
  if (header !== undefined) return header
  const [path, query = ""] = request.url.split("?", 2)
  if (request.method !== "GET" || path !== "/v1/monitor/live") return undefined
  return new URLSearchParams(query).get("merchant") ?? undefined
}

/** Whether a limited credential may call `method path`. */
export const isAllowed = (method: string, path: string): boolean =>
  allowed.some(([m, pattern]) => (m === method || (m === "GET" && method === "HEAD")) && pattern.test(path))

/**
 * Checks a request of `operator` against its merchants, and makes it act for the merchant it
 * names (or its only one). Nothing for a credential of every merchant.
 */
export const enforce = (
  operator: Operators.Operator,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<void, Forbidden | InvalidRequest> =>
  Effect.gen(function* () {
    const merchants = operator.merchants
    if (merchants === undefined) return
    const who = `${operator.via === "token" ? "token" : "operator"} ${operator.name}`
    const list = merchants.join(", ")
    const path = request.url.split("?")[0] ?? request.url
    if (!isAllowed(request.method, path)) {
      return yield* new Forbidden({
        message: `${who} acts for ${list} only: ${request.method} ${path} spans every merchant and is the platform's (a merchant's credential lists and watches its terminals, starts, lists, follows and acts on its own operations, watches and steps its own alerts, and reads its own log and ledger)`,
        role: operator.role
      })
    }
    const named = namedMerchant(request)
    if (named !== undefined) {
      if (!merchants.includes(named)) {
        return yield* new Forbidden({
          message: `${who} acts for ${list} only, not for merchant ${named}`,
          role: operator.role
        })
      }
      return
    }
    const [only, ...others] = merchants
    if (only === undefined || others.length > 0) {
      return yield* new InvalidRequest({
        message: `Tillflow-Merchant: ${who} acts for ${list}: name the merchant this request is for`
      })
    }
    // The request acts for the credential's only merchant, as if it had named it.
    yield* FiberRef.set(Tenant.currentRef, only)
  })
