import { ExecutionQueue } from "@tillflow/engine"
import { PgliteClient, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { queueContract, queueNotificationContract } from "@tillflow/engine/testing"

queueContract("PGlite in memory", SqlExecutionQueue.layer.pipe(Layer.provide(PgliteClient.layer({}))))

// A PGlite database has one process: a queue is not told what it announced itself (its
// process knows), so what "other processes" hear is heard here by a second queue on the
// same client.
const heardByAnotherQueue = Layer.scoped(
  ExecutionQueue.ExecutionQueue,
  Effect.gen(function* () {
    const announcer = yield* ExecutionQueue.ExecutionQueue
    const listener = yield* SqlExecutionQueue.make
    return { ...announcer, changes: listener.changes }
  })
).pipe(Layer.provide(SqlExecutionQueue.layer), Layer.provide(PgliteClient.layer({})))

queueNotificationContract("PGlite in memory", heardByAnotherQueue)
