/**
 * The suite's output: the machine it ran on (with the load average sampled during the
 * run: the machine may be shared), and docs/performance.md updated in place. The page is
 * prose written by people with generated blocks between `<!-- bench:NAME:begin -->` and
 * `<!-- bench:NAME:end -->` markers: a run replaces the blocks of the sections it ran and
 * leaves the rest of the page alone.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import type { ServerInfo } from "./Scratch.js"
import * as Measure from "./Measure.js"

/** Samples the 1-minute load average every few seconds while the suite runs. */
export const sampleLoad = (everyMs = 2_000) => {
  const samples: Array<number> = [os.loadavg()[0] ?? 0]
  const timer = setInterval(() => samples.push(os.loadavg()[0] ?? 0), everyMs)
  timer.unref()
  return {
    stop: () => {
      clearInterval(timer)
      samples.push(os.loadavg()[0] ?? 0)
      return samples
    }
  }
}

/** One paragraph on the machine and the run. */
export const machine = (input: {
  readonly server: ServerInfo | undefined
  readonly load: ReadonlyArray<number>
  readonly startedAt: Date
  readonly seconds: number
  readonly args: ReadonlyArray<string>
}): string => {
  const cpus = os.cpus()
  const load = [...input.load].sort((a, b) => a - b)
  const server =
    input.server === undefined
      ? "PostgreSQL: not reachable"
      : `PostgreSQL ${input.server.version} on the same machine (fsync ${input.server.fsync}, ` +
        `synchronous_commit ${input.server.synchronousCommit}, shared_buffers ${input.server.sharedBuffers})`
  return [
    `Run of ${input.startedAt.toISOString()} (\`npm run bench${input.args.length === 0 ? "" : ` -- ${input.args.join(" ")}`}\`), ` +
      `${Math.round(input.seconds)} s in all.`,
    `Machine: ${cpus.length} CPUs (nproc) × ${cpus[0]?.model ?? "unknown"}, ` +
      `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${server}.`,
    `Load average (1 min) sampled every 2 s during the run: min ${(load[0] ?? 0).toFixed(1)}, ` +
      `median ${Measure.median(load).toFixed(1)}, max ${(load[load.length - 1] ?? 0).toFixed(1)} ` +
      `on ${cpus.length} CPUs — the machine was shared with other jobs, so absolute numbers move; ` +
      `the ratios to the baselines measured in the same rounds are the figures to compare.`
  ].join("\n")
}

const begin = (name: string) => `<!-- bench:${name}:begin -->`
const end = (name: string) => `<!-- bench:${name}:end -->`

/**
 * Replaces the generated block `name` of a page with `content`; a page without that block
 * gets it appended under `heading`.
 */
export const replaceBlock = (page: string, name: string, heading: string, content: string): string => {
  const block = `${begin(name)}\n${content.trim()}\n${end(name)}`
  const from = page.indexOf(begin(name))
  const to = page.indexOf(end(name))
  if (from >= 0 && to > from) return page.slice(0, from) + block + page.slice(to + end(name).length)
  return `${page.trimEnd()}\n\n## ${heading}\n\n${block}\n`
}

/** Updates the blocks of docs/performance.md (created if missing). */
export const writePage = (
  path: string,
  blocks: ReadonlyArray<{ readonly name: string; readonly heading: string; readonly content: string }>
): void => {
  let page = fs.existsSync(path) ? fs.readFileSync(path, "utf8") : "# Performance\n"
  for (const block of blocks) page = replaceBlock(page, block.name, block.heading, block.content)
  fs.writeFileSync(path, page.endsWith("\n") ? page : `${page}\n`)
}
