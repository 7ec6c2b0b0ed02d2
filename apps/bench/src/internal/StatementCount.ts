/**
 * Statements and transactions a process sends through the `pg` driver (tillflow's
 * `@effect/sql-pg` and DBOS Transact both use it): every `Client.query` is one statement;
 * a statement outside `BEGIN … COMMIT` is one transaction of its own, and so is each
 * `COMMIT`. Importing this module installs the count; `take()` returns what was counted
 * since the last `take()`.
 */
import pg from "pg"

/** What was sent. */
export interface Counted {
  readonly statements: number
  readonly commits: number
}

let statements = 0
let commits = 0
const inTransaction = new WeakSet<object>()

const textOf = (first: unknown): string =>
  typeof first === "string"
    ? first
    : typeof first === "object" && first !== null && "text" in first && typeof first.text === "string"
      ? first.text
      : ""

const originalQuery = pg.Client.prototype.query as (...args: Array<unknown>) => unknown
pg.Client.prototype.query = function (this: pg.Client, ...args: Array<unknown>) {
  const text = textOf(args[0]).trimStart().slice(0, 20).toUpperCase()
  statements++
  if (text.startsWith("BEGIN") || text.startsWith("START TRANSACTION")) inTransaction.add(this)
  else if (text.startsWith("COMMIT") || text.startsWith("END")) {
    inTransaction.delete(this)
    commits++
  } else if (text.startsWith("ROLLBACK")) inTransaction.delete(this)
  else if (!inTransaction.has(this)) commits++
  return originalQuery.apply(this, args)
} as typeof pg.Client.prototype.query

/** The statements and commits since the last call. */
export const take = (): Counted => {
  const counted = { statements, commits }
  statements = 0
  commits = 0
  return counted
}
