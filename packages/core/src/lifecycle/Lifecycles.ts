/**
 * Every terminal-less lifecycle workflow in one layer — pre-authorization, reversal,
 * MOTO, tip adjustment, deferred tokenization, batches and device commands — for an app
 * to register with its workflow engine beside the event store and the terminal cloud.
 *
 * @example
 * const Workflows = Lifecycles.layer.pipe(Layer.provide(Layer.mergeAll(engine, store, cloud)))
 */
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Layer from "effect/Layer"
import * as BatchWorkflow from "./BatchWorkflow.js"
import * as DeferredTokenizationWorkflow from "./DeferredTokenizationWorkflow.js"
import * as DeviceCommandWorkflow from "./DeviceCommandWorkflow.js"
import type * as EventStore from "@tillflow/engine/EventStore"
import * as MotoWorkflow from "./MotoWorkflow.js"
import * as PreAuthorizationWorkflow from "./PreAuthorizationWorkflow.js"
import * as ReversalWorkflow from "./ReversalWorkflow.js"
import type * as TerminalCloud from "../model/TerminalCloud.js"
import * as TipAdjustmentWorkflow from "./TipAdjustmentWorkflow.js"

/**
 * Every terminal-less workflow, for a caller that starts them by name (the intake): the one
 * list, beside the layer that registers them.
 */
export const workflows = [
  PreAuthorizationWorkflow.Increase,
  PreAuthorizationWorkflow.Decrease,
  PreAuthorizationWorkflow.Capture,
  ReversalWorkflow.Reverse,
  MotoWorkflow.Sale,
  MotoWorkflow.Refund,
  MotoWorkflow.Reverse,
  TipAdjustmentWorkflow.Adjust,
  DeferredTokenizationWorkflow.Tokenize,
  BatchWorkflow.Close,
  BatchWorkflow.ReadSummary,
  BatchWorkflow.ReadDetail,
  DeviceCommandWorkflow.Send
] as const

/** All the lifecycle workflows, registered with the engine. */
export const layer: Layer.Layer<
  never,
  never,
  WorkflowEngine | EventStore.EventStore | TerminalCloud.TerminalCloud
> = Layer.mergeAll(
  PreAuthorizationWorkflow.layer,
  ReversalWorkflow.layer,
  MotoWorkflow.layer,
  TipAdjustmentWorkflow.layer,
  DeferredTokenizationWorkflow.layer,
  BatchWorkflow.layer,
  DeviceCommandWorkflow.layer
)
