/**
 * A small bounded HTTP load generator (autocannon is not installed): on
 * `{"run": {url, file, connections, maxSeconds}}` it POSTs every request listed in `file`
 * (JSON: `[{path, headers, body}]`) to `url` over `connections` keep-alive connections,
 * each connection sending its next request when the previous answer is in, and answers
 * `{"result": {…}}` with the count, the statuses, the wall time and latency percentiles.
 * Bounded in count (the file) and time (`maxSeconds`), and loopback only.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import { performance } from "node:perf_hooks"
import * as Child from "../internal/Child.js"
import * as Measure from "../internal/Measure.js"

interface Run {
  readonly url: string
  readonly file: string
  readonly connections: number
  readonly maxSeconds: number
}

interface Request {
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

const post = (agent: http.Agent, target: URL, request: Request): Promise<number> =>
  new Promise((resolve) => {
    const body = Buffer.from(request.body)
    const outgoing = http.request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        method: "POST",
        path: request.path,
        headers: { ...request.headers, "content-type": "application/json", "content-length": body.length }
      },
      (response) => {
        response.resume()
        response.on("end", () => resolve(response.statusCode ?? 0))
        response.on("error", () => resolve(0))
      }
    )
    outgoing.on("error", () => resolve(0))
    outgoing.end(body)
  })

const run = async (command: Run) => {
  const target = new URL(command.url)
  if (!["127.0.0.1", "localhost", "[::1]"].includes(target.hostname)) {
    throw new Error(`the load generator only targets loopback, not ${target.hostname}`)
  }
  const requests = JSON.parse(fs.readFileSync(command.file, "utf8")) as ReadonlyArray<Request>
  const connections = Math.max(1, Math.min(256, command.connections))
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const deadline = performance.now() + command.maxSeconds * 1000
  const latencies: Array<number> = []
  const statuses: Record<string, number> = {}
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < requests.length && performance.now() < deadline) {
        const request = requests[next++]
        if (request === undefined) break
        const sent = performance.now()
        const status = await post(agent, target, request)
        latencies.push(performance.now() - sent)
        statuses[String(status)] = (statuses[String(status)] ?? 0) + 1
      }
    })
  )
  const seconds = (performance.now() - started) / 1000
  agent.destroy()
  return {
    sent: latencies.length,
    ok: statuses["200"] ?? 0,
    statuses,
    seconds,
    p50: Measure.percentile(latencies, 50),
    p99: Measure.percentile(latencies, 99),
    max: Measure.percentile(latencies, 100)
  }
}

Child.onCommand((command) => {
  const body = Child.field<Run>("run")(command)
  if (body === undefined) return
  run(body).then(
    (result) => Child.tell({ result }),
    (error: unknown) => Child.tell({ failed: String(error) })
  )
})
Child.tell({ ready: true })
process.stdin.on("end", () => process.exit(0))
process.once("SIGTERM", () => process.exit(0))
