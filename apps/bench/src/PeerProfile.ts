/**
 * A CPU profile of one engine's step path in the peer section's setting, warm:
 * `npm run bench:peer-profile -- [tillflow|dbos] [OUT.cpuprofile]` starts that engine's
 * peer process on a fresh database, runs two warm-up batches, then profiles 6 batches of
 * 80 executions of the peer workflow with 8 in flight (only that window is profiled) and
 * prints steps/s and Node CPU per step; summarise with `npm run bench:profile-summary`.
 */
import * as Child from "./internal/Child.js"
import type * as PeerDrive from "./internal/PeerDrive.js"
import * as Scratch from "./internal/Scratch.js"

const engine = process.argv[2] === "dbos" ? "Dbos" : "Tillflow"
const out = process.argv[3] ?? `/tmp/peer-${engine.toLowerCase()}.cpuprofile`

const main = () =>
  Scratch.using(`peer_profile_${engine.toLowerCase()}`, async (scratch) => {
    const child = Child.start(`apps/bench/src/processes/Peer${engine}Process.ts`, {
      env: { DATABASE_URL: scratch.url, POOL_SIZE: "10" },
      label: "peer-profile"
    })
    try {
      await child.next(Child.field("ready"), 120_000)
      const drive = async (prefix: string) => {
        child.send({ drive: { executions: 80, inFlight: 8, prefix } })
        const answer = await child.next(
          (m) => Child.field<PeerDrive.Driven>("driven")(m) ?? Child.field<string>("failed")(m)
        )
        if (typeof answer === "string") throw new Error(answer)
        return answer
      }
      for (let i = 0; i < 2; i++) await drive(`warm-${i}`)
      child.send({ profile: "start" })
      await child.next(Child.field("profiled"))
      let steps = 0
      let seconds = 0
      let cpuMs = 0
      for (let i = 0; i < 6; i++) {
        const driven = await drive(`profiled-${i}`)
        steps += driven.steps
        seconds += driven.seconds
        cpuMs += driven.cpuMs
      }
      child.send({ profile: out })
      await child.next(Child.field("profiled"))
      process.stdout.write(
        `${engine}: ${steps} steps, ${(steps / seconds).toFixed(0)} steps/s, ${(cpuMs / steps).toFixed(3)} ms of Node CPU per step (profiler on); profile in ${out}\n`
      )
    } finally {
      await child.stop()
    }
  })

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exitCode = 1
})
