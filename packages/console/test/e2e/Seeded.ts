/**
 * The executions page at scale (`Paging.test.ts` in Chromium, `PagingFirefox.test.ts` in
 * Firefox): a database of its own on the PostgreSQL of `DATABASE_URL`, its queue seeded with
 * `count` executions of a workflow no worker runs, one a second back from an hour ago
 * (`seed-1` the newest), through `psql`.
 */
import { execFile, spawnSync } from "node:child_process"

/** The PostgreSQL the tests may create databases on (CI sets it). */
export const databaseUrl = process.env["DATABASE_URL"]
/** Whether `psql` is there to seed with. */
export const psqlAvailable = spawnSync("psql", ["--version"]).status === 0

/**
 * Runs one statement with `psql` on `url`; its output. Asynchronous: the test's worker keeps
 * answering vitest meanwhile (a synchronous wait on a loaded machine can outlast vitest's 60 s
 * RPC timeout).
 */
export const psql = (url: string, statement: string): Promise<string> =>
  new Promise((resolve, reject) =>
    execFile(
      "psql",
      [url, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", statement],
      { encoding: "utf8" },
      (error, stdout, stderr) =>
        error === null ? resolve(stdout.trim()) : reject(new Error(`psql failed: ${stderr || error.message}`))
    )
  )

/** Creates the database `name` on `databaseUrl`; its URL. */
export const createDatabase = async (name: string): Promise<string> => {
  const url = new URL(databaseUrl ?? "").toString().replace(/\/[^/?]*(\?|$)/, `/${name}$1`)
  await psql(databaseUrl ?? "", `CREATE DATABASE ${name}`)
  return url
}

/** Drops the database `name` (its connections closed). */
export const dropDatabase = async (name: string): Promise<void> => {
  await psql(databaseUrl ?? "", `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
}

/** Seeds `count` executions of the workflow `Seeded` into the queue of the database at `url`. */
export const seedExecutions = async (url: string, count: number): Promise<void> => {
  await psql(
    url,
    `INSERT INTO tillflow_executions (execution_id, workflow_name, status, due_at, attributes, created_at, updated_at)
     SELECT md5('seed-' || i), 'Seeded', 'pending', NULL,
            jsonb_build_object('operation', 'seeded', 'idempotencyKey', 'seed-' || i),
            (extract(epoch FROM now()) * 1000)::bigint - 3600000 - i * 1000,
            (extract(epoch FROM now()) * 1000)::bigint - 3600000 - i * 1000
     FROM generate_series(1, ${count}) AS i`
  )
}

/** The id of the seeded execution `n` (`seed-<n>`). */
export const seededId = (url: string, n: number): Promise<string> => psql(url, `SELECT md5('seed-${n}')`)
