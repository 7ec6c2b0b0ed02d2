import { SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Layer from "effect/Layer"
import { queueContract, queueNotificationContract } from "@tillflow/engine/testing"
import { heardByAnotherQueue } from "./HeardByAnotherQueue.js"

// A fresh database on the PostgreSQL of DATABASE_URL (PGlite, with a warning, when unset).
queueContract("PostgreSQL (fresh database)", SqlExecutionQueue.layer.pipe(Layer.provide(TestDatabase.layer)))
queueNotificationContract("PostgreSQL (fresh database)", heardByAnotherQueue(TestDatabase.layer))
