/**
 * Why a connection to PostgreSQL failed, said for an operator: PostgreSQL's own message
 * and code (a missing database, an unknown role, a refused password), or the network's
 * (a closed port, an unknown host, no answer), with what to check. Never the URL itself:
 * it may hold a password.
 */

interface Reason {
  readonly message: string
  readonly code?: string | undefined
}

/** The innermost error with a message: @effect/sql's `SqlError` wraps pg's, Node may aggregate. */
const reasonOf = (error: unknown, depth = 0): Reason | undefined => {
  if (typeof error !== "object" || error === null || depth > 5) return undefined
  const record = error as {
    readonly message?: unknown
    readonly code?: unknown
    readonly cause?: unknown
    readonly errors?: unknown
  }
  const inner = reasonOf(record.cause, depth + 1)
  if (inner !== undefined) return inner
  // Node's AggregateError (localhost as ::1 and 127.0.0.1): the first one says it.
  if (Array.isArray(record.errors)) {
    const first = reasonOf(record.errors[0], depth + 1)
    if (first !== undefined) return first
  }
  const message = typeof record.message === "string" ? record.message : ""
  if (message === "") return undefined
  return { message, ...(typeof record.code === "string" ? { code: record.code } : {}) }
}

const hints: Readonly<Record<string, string>> = {
  "3D000": "create the database, or correct its name in the URL",
  "28000": "create the role, or correct the user in the URL (or pg_hba.conf refuses this client)",
  "28P01": "correct the password in the URL",
  "42501": "grant this role the right to connect",
  "53300": "the server has no connection left: lower DATABASE_POOL_SIZE or raise max_connections",
  "57P03": "the server is starting up or shutting down: try again shortly",
  ECONNREFUSED: "nothing listens there: is PostgreSQL running, and are the host and port right?",
  ENOTFOUND: "the host name does not resolve: correct the host in the URL",
  EAI_AGAIN: "the host name could not be resolved now: check DNS",
  ETIMEDOUT: "no answer: check the host, the port and any firewall",
  EHOSTUNREACH: "the host cannot be reached: check the network",
  ECONNRESET: "the server closed the connection: check that it is PostgreSQL and whether it requires SSL"
}

/** A connection failure said in one line: the reason, its code, what to check. */
export const describe = (error: unknown): string => {
  const reason = reasonOf(error)
  if (reason === undefined) return "the connection failed for a reason the driver did not give"
  const timedOut = /timed out|timeout/i.test(reason.message) && reason.code === undefined
  const hint = reason.code === undefined ? (timedOut ? hints["ETIMEDOUT"] : undefined) : hints[reason.code]
  const isPostgres =
    reason.code !== undefined && /^[0-9A-Z]{5}$/.test(reason.code) && !reason.code.startsWith("E")
  return `${reason.message}${reason.code === undefined ? "" : isPostgres ? ` (PostgreSQL ${reason.code})` : ` (${reason.code})`}${hint === undefined ? "" : `: ${hint}`}`
}
