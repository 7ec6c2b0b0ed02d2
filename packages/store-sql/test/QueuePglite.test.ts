import { PgliteClient, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Layer from "effect/Layer"
import { queueContract, queueNotificationContract } from "./QueueContract.js"

queueContract("PGlite in memory", SqlExecutionQueue.layer.pipe(Layer.provide(PgliteClient.layer({}))))
queueNotificationContract(
  "PGlite in memory",
  SqlExecutionQueue.layer.pipe(Layer.provide(PgliteClient.layer({})))
)
