import { PgliteEventStore, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Layer from "effect/Layer"
import { engineContract } from "@tillflow/engine/testing"

engineContract(
  "PGlite in memory",
  SqlExecutionQueue.layerWith({ streamVersions: true }).pipe(Layer.provideMerge(PgliteEventStore.layer())),
  { claimsAnswerStreamVersions: true }
)
