/**
 * Samples of the intake's own stored events: the two steps of an alert's lifecycle
 * (`alert-<id>` streams, written by `Monitor`). Their stored forms are pinned by the golden
 * files under `packages/intake/test/goldens/alert` (written by `npm run goldens:update`,
 * compared by the intake's golden test), like core's and the engine's events. Test support
 * only: production code does not import it.
 */
import type * as EventGoldens from "@tillflow/engine/testing/EventGoldens"
import * as Monitor from "../Monitor.js"

/** The catalogue name of the alert steps' golden files. */
export const registry = "alert"

// Every step's tag, as a record over the union: a step added to `AlertEvent` without a line
// here does not compile.
const tags: Readonly<Record<Monitor.AlertEvent["_tag"], true>> = {
  AlertAcknowledged: true,
  AlertResolved: true
}

/** Every type an `alert-<id>` stream holds. */
export const types: ReadonlySet<string> = new Set(Object.keys(tags))

const alertId = "unresolved-01236fc0-8192-11eb-9aca-ad4b0e95f241"
const at = 1_732_442_700_000

/** One sample per type, stored as `Monitor` stores it. */
export const samples: ReadonlyArray<EventGoldens.Sample> = [
  Monitor.AlertAcknowledged.make({ alertId, operator: "maria", reason: "calling the acquirer about it", at }),
  Monitor.AlertResolved.make({
    alertId,
    operator: "maria",
    reason: "the acquirer confirmed the sale was approved; resolved as applied",
    at: at + 600_000
  })
].map((event) => ({ registry, event: Monitor.storedAlertEvent(event) }))
