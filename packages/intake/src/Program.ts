/**
 * Running the worker as a program, shared by `npm start` and `tillflow worker`: read the
 * configuration (environment, then the configuration file), install the logger and the
 * trace exporter (`Tracing`, from the `OTEL_*` variables), launch the worker layer until
 * interrupted. A start-up failure is said in one line on stderr
 * and exits with status 1.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Tracing from "./Tracing.js"
import * as Worker from "./Worker.js"
import * as WorkerConfig from "./WorkerConfig.js"

/** The worker program; `name` prefixes the start-up failure message. */
export const run = (name: string): Effect.Effect<void> =>
  Effect.gen(function* () {
    const config = yield* WorkerConfig.load
    // Traces where the OTEL_* variables say (none when they name no endpoint).
    const tracing = yield* Tracing.settings
    yield* Layer.launch(Worker.layer(config).pipe(Layer.provide(Tracing.layer(tracing)))).pipe(
      Effect.provide(Worker.loggerLayer(config))
    )
  }).pipe(
    Effect.provide(WorkerConfig.layerProvider()),
    Effect.catchAll((error) =>
      Effect.zipRight(
        Console.error(`tillflow ${name}: ${"message" in error ? error.message : String(error)}`),
        // Leave now: a half-built start (a pool whose peer layer failed) may hold the loop.
        Effect.sync(() => process.exit(1))
      )
    )
  )
