/**
 * Scratch databases: every benchmark works in its own fresh database on the PostgreSQL of
 * `DATABASE_URL`, created for it and dropped afterwards, so the suite never touches data
 * it did not make and parallel test runs on the same server are left alone.
 */
import pg from "pg"

/** The server the suite uses (`DATABASE_URL`, default the local trust-auth PostgreSQL). */
export const adminUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** The URL of another database on the same server. */
export const withDatabase = (url: string, name: string): string => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

/** A fresh database; `drop` removes it (forcing out any connection left). */
export interface Scratch {
  readonly name: string
  readonly url: string
  readonly drop: () => Promise<void>
}

const admin = async <A>(body: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    return await body(client)
  } finally {
    await client.end()
  }
}

/** Creates a fresh database named `tillflow_bench_<purpose>_<random>`. */
export const create = async (purpose: string): Promise<Scratch> => {
  const name = `tillflow_bench_${purpose}_${Math.random().toString(16).slice(2, 10)}`
  await admin((client) => client.query(`CREATE DATABASE ${name}`))
  return {
    name,
    url: withDatabase(adminUrl, name),
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {})
  }
}

/** Runs `body` with a fresh database, dropped afterwards whatever happens. */
export const using = async <A>(purpose: string, body: (scratch: Scratch) => Promise<A>): Promise<A> => {
  const scratch = await create(purpose)
  try {
    return await body(scratch)
  } finally {
    await scratch.drop()
  }
}

/** The server's version and the settings that decide write speed. */
export interface ServerInfo {
  readonly version: string
  readonly fsync: string
  readonly synchronousCommit: string
  readonly sharedBuffers: string
}

/** What the server is, or undefined when it cannot be reached. */
export const serverInfo = async (): Promise<ServerInfo | undefined> => {
  try {
    return await admin(async (client) => {
      const show = async (name: string) => String((await client.query(`SHOW ${name}`)).rows[0]?.[name] ?? "?")
      return {
        version: await show("server_version"),
        fsync: await show("fsync"),
        synchronousCommit: await show("synchronous_commit"),
        sharedBuffers: await show("shared_buffers")
      }
    })
  } catch {
    return undefined
  }
}
