/**
 * PGlite's own start, for the cold-start benchmark: load `@electric-sql/pglite`, open (or
 * create) DATA_DIR, run one query, print `{"ready": true}`, close.
 */
import { PGlite } from "@electric-sql/pglite"
import * as Child from "../internal/Child.js"

PGlite.create(process.env["DATA_DIR"] ?? "memory://")
  .then(async (db) => {
    await db.query("SELECT 1")
    Child.tell({ ready: true })
    await db.close()
    process.exit(0)
  })
  .catch((error: unknown) => {
    process.stderr.write(`PGlite failed to start: ${String(error)}\n`)
    process.exit(1)
  })
