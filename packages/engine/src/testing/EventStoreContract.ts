/**
 * The one contract every `EventStore` implementation keeps, as a suite run against a Layer:
 * memory (core), PGlite and PostgreSQL (this package). Tests share the layer (one database
 * per file), so each works on its own stream ids and reads the global log from the end it
 * found when it started. Test services are excluded: subscriptions poll on the real clock.
 * Each concern's tests live in a module of `./eventStore/`; this one runs them all.
 */
import { layer as layerTests } from "@effect/vitest"
import type { EventStore } from "../index.js"
import type * as Layer from "effect/Layer"
import * as AppendAndRead from "./eventStore/AppendAndRead.js"
import * as ChainVerification from "./eventStore/ChainVerification.js"
import * as ExpectedVersions from "./eventStore/ExpectedVersions.js"
import * as GlobalLog from "./eventStore/GlobalLog.js"
import * as MultiStream from "./eventStore/MultiStream.js"
import * as Refusals from "./eventStore/Refusals.js"
import type { OtherInstance, Tamper } from "./eventStore/Streams.js"
import * as Subscriptions from "./eventStore/Subscriptions.js"
import * as TwoInstances from "./eventStore/TwoInstances.js"

export { endOfLog, freshStream, OtherInstance, readAllFrom, Tamper } from "./eventStore/Streams.js"

/** Runs the contract against `layer`. */
export const eventStoreContract = <E>(
  name: string,
  layer: Layer.Layer<EventStore.EventStore | Tamper | OtherInstance, E>
) =>
  layerTests(layer, { timeout: 120_000, excludeTestServices: true })(`EventStore contract: ${name}`, (it) => {
    // First: its first test wants a fresh store, whose positions then cross 9 → 10.
    AppendAndRead.suite(it)
    ExpectedVersions.suite(it)
    TwoInstances.suite(it)
    MultiStream.suite(it)
    Refusals.suite(it)
    GlobalLog.suite(it)
    Subscriptions.suite(it)
    ChainVerification.suite(it)
  })
