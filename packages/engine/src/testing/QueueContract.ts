/**
 * The rules of the `ExecutionQueue` port, run against each implementation (memory,
 * PGlite, PostgreSQL): claims, leases and their expiry, heartbeats, suspension and
 * wake-ups, concurrency keys, visibility, tenants and their fair shares, concurrent
 * claimers never sharing a row, and live executions never hidden by what a queue keeps to
 * skip its history.
 * Times are plain numbers: the queue never reads a clock itself. Each concern's tests live
 * in a module of `./queue/`; this one runs them all on one layer.
 */
import { it, layer as testLayer } from "@effect/vitest"
import type { ExecutionQueue } from "../index.js"
import type * as Layer from "effect/Layer"
import * as ClaimOrder from "./queue/ClaimOrder.js"
import * as ConcurrencyKeys from "./queue/ConcurrencyKeys.js"
import * as Enqueue from "./queue/Enqueue.js"
import * as History from "./queue/History.js"
import * as Leases from "./queue/Leases.js"
import * as Listing from "./queue/Listing.js"
import * as NextDue from "./queue/NextDue.js"
import * as Notifications from "./queue/Notifications.js"
import * as StartDeadlines from "./queue/StartDeadlines.js"
import * as StartLeased from "./queue/StartLeased.js"
import * as Suspension from "./queue/Suspension.js"
import * as Tenants from "./queue/Tenants.js"

export const queueContract = <E>(name: string, layer: Layer.Layer<ExecutionQueue.ExecutionQueue, E>) =>
  it.layer(layer, { timeout: 60_000 })(`ExecutionQueue on ${name}`, (it) => {
    Enqueue.suite(it)
    Leases.suite(it)
    Suspension.suite(it)
    ClaimOrder.suite(it)
    NextDue.suite(it)
    ConcurrencyKeys.suite(it)
    StartDeadlines.suite(it)
    StartLeased.suite(it)
    Listing.suite(it)
    History.suite(it)
    Tenants.suite(it)
  })

/** The SQL queue announces changes on LISTEN/NOTIFY (the memory queue has nothing to say). */
export const queueNotificationContract = <E>(
  name: string,
  layer: Layer.Layer<ExecutionQueue.ExecutionQueue, E>
) =>
  testLayer(layer, { timeout: 60_000, excludeTestServices: true })(
    `ExecutionQueue notifications on ${name}`,
    (it) => {
      Notifications.suite(it)
    }
  )
