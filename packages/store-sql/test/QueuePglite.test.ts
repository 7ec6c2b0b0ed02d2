import { PgliteClient, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Layer from "effect/Layer"
import { queueContract, queueNotificationContract } from "@tillflow/engine/testing"
import { heardByAnotherQueue } from "./HeardByAnotherQueue.js"

queueContract("PGlite in memory", SqlExecutionQueue.layer.pipe(Layer.provide(PgliteClient.layer({}))))
queueNotificationContract("PGlite in memory", heardByAnotherQueue(PgliteClient.layer({})))
