/**
 * The behaviours of tillflow's durable workflow engine, run against each pair of stores
 * (memory, PGlite, PostgreSQL). Workflows are plain @effect/workflow code; every test
 * starts "nodes" (engine + worker + registered workflows) over the shared stores, so a
 * node can be stopped and another started to show what survives a restart. Time is the
 * TestClock: the engine reads it for timers and leases, the SQL queue stores it. Each
 * concern's tests live in a module of `./engine/`; this one runs them all on one layer.
 */
import { it } from "@effect/vitest"
import type * as Layer from "effect/Layer"
import * as Activities from "./engine/Activities.js"
import * as CachedHistories from "./engine/CachedHistories.js"
import * as ChildWorkflows from "./engine/ChildWorkflows.js"
import * as Clocks from "./engine/Clocks.js"
import * as ConcurrencyKeys from "./engine/ConcurrencyKeys.js"
import * as DeferredWakes from "./engine/DeferredWakes.js"
import * as Deferreds from "./engine/Deferreds.js"
import * as Determinism from "./engine/Determinism.js"
import * as DomainEvents from "./engine/DomainEvents.js"
import * as DurableSteps from "./engine/DurableSteps.js"
import * as Interruption from "./engine/Interruption.js"
import type { Stores } from "./engine/Nodes.js"
import * as SearchAttributes from "./engine/SearchAttributes.js"
import * as Secrets from "./engine/Secrets.js"
import * as Starting from "./engine/Starting.js"
import * as Tenants from "./engine/Tenants.js"
import * as Versions from "./engine/Versions.js"
import * as Workers from "./engine/Workers.js"

export const engineContract = <E>(
  name: string,
  stores: Layer.Layer<Stores, E>,
  options: {
    /** The queue answers each claim with the execution stream's version (`Claim.streamVersion`). */
    readonly claimsAnswerStreamVersions?: boolean
  } = {}
) =>
  it.layer(stores, { timeout: 120_000 })(`DurableEngine on ${name}`, (it) => {
    Starting.suite(it)
    Activities.suite(it)
    Deferreds.suite(it)
    DeferredWakes.suite(it)
    Clocks.suite(it)
    Interruption.suite(it)
    ChildWorkflows.suite(it)
    Determinism.suite(it)
    DurableSteps.suite(it)
    CachedHistories.suite(it, options)
    ConcurrencyKeys.suite(it)
    Workers.suite(it)
    SearchAttributes.suite(it)
    DomainEvents.suite(it)
    Secrets.suite(it)
    Versions.suite(it)
    Tenants.suite(it)
  })
