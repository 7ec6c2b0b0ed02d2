import { describe, expect, it } from "@effect/vitest"
import { PgliteLock } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const folder = () => Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-lock-")), "data")

const writeLock = (dataDir: string, holder: Record<string, unknown>) =>
  Fs.writeFileSync(PgliteLock.lockPath(dataDir), JSON.stringify(holder))

/** A pid that certainly ran and is gone. */
const deadPid = (): number => {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8"
  })
  return Number(child.stdout)
}

describe("PgliteLock", () => {
  it.effect(
    "the holder publishes details; a second taker is refused with them; the lock goes with the scope",
    () =>
      Effect.gen(function* () {
        const dataDir = folder()
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* PgliteLock.acquire(dataDir, "worker")
            yield* PgliteLock.publish(dataDir, { intakeUrl: "http://127.0.0.1:9" })
            const holder = Option.getOrThrow(yield* PgliteLock.holder(dataDir))
            expect(holder).toMatchObject({
              pid: process.pid,
              kind: "worker",
              details: { intakeUrl: "http://127.0.0.1:9" }
            })
            expect(Fs.statSync(PgliteLock.lockPath(dataDir)).mode & 0o777).toBe(0o600)
            const second = yield* Effect.exit(Effect.scoped(PgliteLock.acquire(dataDir, "cli")))
            expect(Exit.isFailure(second)).toBe(true)
            if (Exit.isFailure(second)) {
              const error = second.cause._tag === "Fail" ? second.cause.error : undefined
              expect(error?._tag).toBe("DataDirLocked")
              expect(error?.message).toContain("in use by a worker")
              expect(error?.message).toContain("serving http://127.0.0.1:9")
            }
          })
        )
        expect(Fs.existsSync(PgliteLock.lockPath(dataDir))).toBe(false)
        expect(Option.isNone(yield* PgliteLock.holder(dataDir))).toBe(true)
      })
  )

  it.effect("a live process elsewhere holds it: refused", () =>
    Effect.gen(function* () {
      const dataDir = folder()
      Fs.mkdirSync(Path.dirname(dataDir), { recursive: true })
      writeLock(dataDir, { pid: process.ppid, instance: "x", kind: "worker", startedAt: "then", details: {} })
      const exit = yield* Effect.exit(Effect.scoped(PgliteLock.acquire(dataDir, "cli")))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(Option.isSome(yield* PgliteLock.holder(dataDir))).toBe(true)
    })
  )

  it.effect(
    "a lock left by a process that is gone, or by an earlier process with this pid, is taken over",
    () =>
      Effect.gen(function* () {
        for (const pid of [deadPid(), process.pid]) {
          const dataDir = folder()
          writeLock(dataDir, { pid, instance: "from-before", kind: "worker", startedAt: "then", details: {} })
          expect(Option.isNone(yield* PgliteLock.holder(dataDir))).toBe(true)
          yield* Effect.scoped(
            Effect.gen(function* () {
              yield* PgliteLock.acquire(dataDir, "cli")
              expect(Option.getOrThrow(yield* PgliteLock.holder(dataDir)).kind).toBe("cli")
            })
          )
        }
      })
  )
})
