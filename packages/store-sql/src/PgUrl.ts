/**
 * The check of a PostgreSQL connection URL before any connection is tried, in a module of
 * its own that loads no driver (a configuration reader uses it). It never repeats the value:
 * a URL may hold a password.
 */

/**
 * Why `url` is not a PostgreSQL connection URL, as a predicate to put after its name
 * ("is not a PostgreSQL URL: expected postgres://…"), or `undefined` when it is one.
 *
 * @example
 * PgUrl.problem("postgres://tillflow@db:5432/payments") // undefined
 * PgUrl.problem("db:5432") // "is not a PostgreSQL URL: it starts with db:, expected postgres:// …"
 */
export const problem = (url: string): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "is not a PostgreSQL URL: expected postgres://user:password@host:5432/database (the value is not shown: it may hold a password)"
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    return `is not a PostgreSQL URL: it starts with ${parsed.protocol}, expected postgres:// or postgresql://`
  }
  return undefined
}
