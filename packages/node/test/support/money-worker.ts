/**
 * A worker process of the model-based money test (issue 28, "two worker processes"): the
 * library's stack as a worker runs it (`Stack.layerConfig`: the store of `DATABASE_URL`, the
 * remote service of `TERMINAL_CLOUD_*` — the test instance's built-in simulator —, the
 * payment and lifecycle workflows under the merchant's rules, an engine worker), configured
 * by the environment the test gives it. Prints `ready` once it runs, and runs until killed.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Stack } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const ready = Effect.sync(() => process.stdout.write("ready\n"))

NodeRuntime.runMain(Layer.launch(Stack.layerConfig({ holder: "money-worker" }).pipe(Layer.tap(() => ready))))
