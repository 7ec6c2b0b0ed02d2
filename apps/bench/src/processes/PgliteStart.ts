/**
 * PGlite's own start, for the cold-start benchmark: open (or create) DATA_DIR and run one
 * query, nothing else imported. Prints `{"ready": {"bootMs", "loadedMs", "readyMs"}}`
 * (milliseconds since the process started).
 */
import { evaluatedAt } from "../internal/StartMark.js"
import { PGlite } from "@electric-sql/pglite"
import { performance } from "node:perf_hooks"
import * as Child from "../internal/Child.js"

const loadedMs = performance.now()
PGlite.create(process.env["DATA_DIR"] ?? "memory://")
  .then(async (db) => {
    await db.query("SELECT 1")
    Child.tell({ ready: { bootMs: evaluatedAt, loadedMs, readyMs: performance.now() } })
    await db.close()
    process.exit(0)
  })
  .catch((error: unknown) => {
    process.stderr.write(`PGlite failed to start: ${String(error)}\n`)
    process.exit(1)
  })
