/**
 * The raw baselines: what the machine does without tillflow, with the `pg` driver
 * directly on a table shaped like `events` (same columns, same indexes, same ~300-byte
 * payment-shaped JSON). Every figure of the suite is divided by one of these, measured in
 * the same run.
 */
import pg from "pg"

/** A payment-shaped event body, about 300 bytes of JSON. */
export const payload = (i: number) => ({
  amount: String(1000 + i),
  currency: "EUR",
  serialNumber: "0821032398",
  transactionReference: globalThis.crypto.randomUUID(),
  status: "AUTHORISED",
  maskedCardNumber: "476173******0119",
  authorisationCode: "A1B2C3",
  efttimestamp: 1615374961000 + i,
  receipt: { merchant: "https://receipts.example/merchant/abc", customer: "https://receipts.example/c/abc" }
})

/** A table with the columns and indexes of `events`, without the store around it. */
export const rawTable = `CREATE TABLE IF NOT EXISTS raw_events (
  global_position bigint GENERATED ALWAYS AS IDENTITY,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream_id text NOT NULL, version bigint NOT NULL, event_id uuid NOT NULL UNIQUE,
  type text NOT NULL, schema_version integer NOT NULL, data jsonb NOT NULL, metadata jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(), hash text NOT NULL,
  PRIMARY KEY (stream_id, version), UNIQUE (global_position));
CREATE UNIQUE INDEX IF NOT EXISTS raw_events_global_order ON raw_events (transaction_id, global_position)`

/** The parameters of one row. */
export const rowValues = (stream: string, version: number): ReadonlyArray<unknown> => [
  stream,
  version,
  globalThis.crypto.randomUUID(),
  "PaymentAuthorised",
  1,
  JSON.stringify(payload(version)),
  "{}",
  "0".repeat(64)
]

/** `INSERT … VALUES (…), (…)` of `rows` rows. */
export const multiRowInsert = (rows: number): string => {
  const tuples = Array.from({ length: rows }, (_, r) => {
    const base = r * 8
    return `($${base + 1}, $${base + 2}, $${base + 3}, $${base + 4}, $${base + 5}, $${base + 6}::jsonb, $${base + 7}::jsonb, $${base + 8})`
  })
  return `INSERT INTO raw_events (stream_id, version, event_id, type, schema_version, data, metadata, hash) VALUES ${tuples.join(", ")}`
}

const insertOne = multiRowInsert(1)

/** `BEGIN; INSERT one row; COMMIT` `count` times on one connection. */
export const singleInserts = async (
  client: pg.ClientBase,
  stream: string,
  count: number
): Promise<number> => {
  for (let i = 0; i < count; i++) {
    await client.query("BEGIN")
    await client.query(insertOne, rowValues(stream, i + 1) as Array<unknown>)
    await client.query("COMMIT")
  }
  return count
}

/** Open connections to one database, for the parallel baselines. */
export interface Connections {
  readonly clients: ReadonlyArray<pg.Client>
  readonly close: () => Promise<void>
}

/** Opens `n` connections and creates the raw table. */
export const connect = async (url: string, n: number): Promise<Connections> => {
  const clients = await Promise.all(
    Array.from({ length: n }, async () => {
      const client = new pg.Client({ connectionString: url, application_name: "tillflow-bench-raw" })
      await client.connect()
      return client
    })
  )
  await clients[0]?.query(rawTable)
  return { clients, close: () => Promise.all(clients.map((c) => c.end())).then(() => {}) }
}

let parallelRun = 0

/**
 * The raw parallel insert rate: every connection does `perConnection` single-row
 * insert transactions at once; rows per second over all of them.
 */
export const parallelSingleInserts = async (
  connections: Connections,
  perConnection: number
): Promise<number> => {
  const run = parallelRun++
  const started = performance.now()
  await Promise.all(
    connections.clients.map((client, i) => singleInserts(client, `raw-parallel-${run}-${i}`, perConnection))
  )
  return (connections.clients.length * perConnection) / ((performance.now() - started) / 1000)
}
