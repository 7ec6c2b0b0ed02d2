import { SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Layer from "effect/Layer"
import { engineContract } from "@tillflow/engine/testing"

// A fresh database on the PostgreSQL of DATABASE_URL (PGlite, with a warning, when unset).
engineContract(
  "PostgreSQL (fresh database)",
  SqlExecutionQueue.layerWith({ streamVersions: true }).pipe(Layer.provideMerge(TestDatabase.layer)),
  { claimsAnswerStreamVersions: true }
)
