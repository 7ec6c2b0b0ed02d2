import { TestDatabase } from "@tillflow/store-sql"
import * as Layer from "effect/Layer"
import { eventStoreContract } from "@tillflow/engine/testing"
import { sqlTamper } from "./SqlTamper.js"

// A fresh database on the PostgreSQL of DATABASE_URL (PGlite, with a warning, when unset).
eventStoreContract("PostgreSQL (fresh database)", sqlTamper.pipe(Layer.provideMerge(TestDatabase.layer)))
