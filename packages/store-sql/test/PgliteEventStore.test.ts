import { PgliteEventStore } from "@tillflow/store-sql"
import * as Layer from "effect/Layer"
import { eventStoreContract } from "./EventStoreContract.js"
import { sqlTamper } from "./SqlTamper.js"

eventStoreContract(
  "PGlite (memory)",
  sqlTamper.pipe(Layer.provideMerge(PgliteEventStore.layer({ pollInterval: "50 millis" })))
)
