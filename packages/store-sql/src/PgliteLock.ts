/**
 * An exclusive lock on a PGlite data directory. PGlite is PostgreSQL in one process, with
 * no postmaster to arbitrate: two processes opening the same directory corrupt it. A
 * process that opens one therefore takes this lock first: a file beside the directory
 * (`<dataDir>.lock`, mode 0600) naming the holder's pid and what it is, plus details the
 * holder may add (the worker writes its intake address, so a command line can reach it
 * instead of opening the directory). A lock whose process is gone is stale and taken over.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** What the lock file says about its holder. */
export const Holder = Schema.Struct({
  pid: Schema.Int,
  /** A random id of the holding instance: a pid reused after a restart (pid 1 in a container) is not the holder. */
  instance: Schema.String,
  /** What holds it: `worker`, `cli` … */
  kind: Schema.String,
  startedAt: Schema.String,
  /** Free-form details the holder publishes (the worker's intake URL). */
  details: Schema.Record({ key: Schema.String, value: Schema.String })
})
/** @see Holder */
export type Holder = typeof Holder.Type

/** The data directory is held by another live process. */
export class DataDirLocked extends Schema.TaggedError<DataDirLocked>()("DataDirLocked", {
  dataDir: Schema.String,
  holder: Holder
}) {
  override get message(): string {
    const url = this.holder.details["intakeUrl"]
    return (
      `The embedded store ${this.dataDir} is in use by a ${this.holder.kind} (pid ${this.holder.pid}, since ${this.holder.startedAt})` +
      (url === undefined ? "" : `, serving ${url}`) +
      ": PGlite allows one process per data directory"
    )
  }
}

/** The lock file could not be written or read. */
export class LockError extends Schema.TaggedError<LockError>()("LockError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot lock ${this.path}: ${this.reason}`
  }
}

/** The lock file of a data directory. */
export const lockPath = (dataDir: string): string => `${Path.resolve(dataDir)}.lock`

const decodeHolder = Schema.decodeUnknownOption(Schema.parseJson(Holder))

/** The instances of this process that hold locks (by lock path). */
const held = new Map<string, string>()

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readHolder = (path: string): Option.Option<Holder> => {
  try {
    return decodeHolder(Fs.readFileSync(path, "utf8"))
  } catch {
    return Option.none()
  }
}

/** Whether a holder is live: this very instance, or another process that still runs. */
const isLive = (path: string, h: Holder): boolean =>
  h.pid === process.pid ? held.get(path) === h.instance : isAlive(h.pid)

/** The live holder of a data directory's lock, if any (a stale lock counts as none). */
export const holder = (dataDir: string): Effect.Effect<Option.Option<Holder>> =>
  Effect.sync(() => {
    const path = lockPath(dataDir)
    return Option.filter(readHolder(path), (h) => isLive(path, h))
  })

const write = (path: string, holder: Holder, flag: "wx" | "w"): void => {
  const fd = Fs.openSync(path, flag, 0o600)
  try {
    Fs.writeFileSync(fd, JSON.stringify(holder))
  } finally {
    Fs.closeSync(fd)
  }
}

/**
 * Takes the lock of `dataDir` for this process until the scope closes; fails with
 * `DataDirLocked` when another live process holds it. Creates the parent directory.
 */
export const acquire = (
  dataDir: string,
  kind: string,
  details: Record<string, string> = {}
): Effect.Effect<void, DataDirLocked | LockError, Scope.Scope> => {
  const path = lockPath(dataDir)
  const mine: Holder = {
    pid: process.pid,
    instance: globalThis.crypto.randomUUID(),
    kind,
    startedAt: new Date().toISOString(),
    details
  }
  const take = Effect.try({
    try: () => {
      Fs.mkdirSync(Path.dirname(path), { recursive: true })
      for (let tries = 0; tries < 2; tries++) {
        try {
          write(path, mine, "wx")
          held.set(path, mine.instance)
          return Option.none<Holder>()
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
          const current = readHolder(path)
          if (Option.isSome(current) && isLive(path, current.value)) return current
          // Stale (its process is gone, or an earlier process had this pid) or unreadable: take it over.
          Fs.rmSync(path, { force: true })
        }
      }
      throw new Error("the lock file keeps reappearing")
    },
    catch: (error) => new LockError({ path, reason: error instanceof Error ? error.message : String(error) })
  })
  return Effect.acquireRelease(
    Effect.flatMap(take, (held) =>
      Option.isSome(held) ? Effect.fail(new DataDirLocked({ dataDir, holder: held.value })) : Effect.void
    ),
    () =>
      Effect.sync(() => {
        const current = readHolder(path)
        if (Option.isSome(current) && current.value.instance === mine.instance)
          Fs.rmSync(path, { force: true })
        if (held.get(path) === mine.instance) held.delete(path)
      })
  )
}

/** Publishes details in the lock this process holds (merged with the ones already there). */
export const publish = (dataDir: string, details: Record<string, string>): Effect.Effect<void, LockError> => {
  const path = lockPath(dataDir)
  return Effect.try({
    try: () => {
      const current = readHolder(path)
      if (
        Option.isNone(current) ||
        current.value.pid !== process.pid ||
        held.get(path) !== current.value.instance
      ) {
        throw new Error("this process does not hold the lock")
      }
      write(path, { ...current.value, details: { ...current.value.details, ...details } }, "w")
    },
    catch: (error) => new LockError({ path, reason: error instanceof Error ? error.message : String(error) })
  })
}
