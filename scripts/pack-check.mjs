/**
 * The pack check: the library packages as a user installs them today, from tarballs. It
 * builds the workspace (`npm run build`) and packs every library package the way
 * `npm run pack:packages` does (`scripts/pack.mjs`: `npm pack`, each tarball checked to hold
 * the JavaScript and declarations its `exports` name) into a temporary directory. Then:
 *
 * - **the README's install**: in an empty project, the one `npm install` of every tarball
 *   and the peers that the README and docs/embedding.md give; one copy of `effect`; every
 *   package's entry point imported by plain `node`;
 * - **every example** under `examples/`: copied out of the repository, its `file:` specs of
 *   `build/packages/*.tgz` pointed at these tarballs, installed, the tarballs' TypeScript
 *   sources deleted (nothing may need them), type-checked and built with its own `tsc`
 *   (`npm run build`), started with plain `node` (`npm start`) on a free port; a sale must
 *   come back approved, then a refund linked to it (by the sale's `efttransactionID`).
 *
 * The convention every example follows: scripts `build` and `start`; it listens on `PORT` at
 * 127.0.0.1 and prints `listening on http://127.0.0.1:<port>` once ready; `POST /sales` with
 * `{"amount":"10.50","currency":"EUR"}` answers 200 with `"outcome":"approved"` and the sale's
 * `efttransactionID`; `POST /refunds` with `{"originalTransactionId", "amount", "currency"}`
 * answers 200 with `"outcome":"approved"`; with nothing configured it runs on the embedded
 * store and the built-in simulator.
 *
 * Usage: `node scripts/pack-check.mjs [example ...]` (all examples by default);
 * `TILLFLOW_PACK_CHECK_KEEP=1` keeps the temporary directory for a look.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import process from "node:process"
import { clearTimeout, setTimeout } from "node:timers"
import { packAll, peers, repository, run, tarballName } from "./pack.mjs"

const startTimeoutMs = 180_000
const saleTimeoutMs = 120_000

const fail = (message) => {
  throw new Error(message)
}

/** A TCP port free on 127.0.0.1 now. */
const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/** Copies an example without its installed or built files. */
const copyExample = (from, to) =>
  fs.cpSync(from, to, {
    recursive: true,
    filter: (source) =>
      !["node_modules", "dist", ".tillflow", "package-lock.json"].includes(path.basename(source))
  })

/**
 * The example's manifest with its `file:` specs of `build/packages/` (what a clone installs
 * after `npm run pack:packages`) pointed at the tarballs packed here. Each @tillflow/*
 * dependency and override must name `build/packages/<tarball>`, and the overrides must cover
 * every library package (the tarballs depend on each other by version, which the registry
 * does not hold yet), so that the example installs from a clone as its README says.
 */
const pointAtTarballs = (dir, tarballs) => {
  const file = path.join(dir, "package.json")
  const manifest = JSON.parse(fs.readFileSync(file, "utf8"))
  const example = path.basename(dir)
  const inClone = (name) => `file:../../build/packages/${tarballName(name)}`
  const repoint = (field) => {
    for (const name of Object.keys(manifest[field] ?? {})) {
      if (!name.startsWith("@tillflow/")) continue
      if (tarballs[name] === undefined)
        fail(`${example} depends on ${name}, which no package of packages/ is`)
      if (manifest[field][name] !== inClone(name))
        fail(`${example}: ${field}["${name}"] is ${manifest[field][name]}, not ${inClone(name)}`)
      manifest[field][name] = `file:${tarballs[name]}`
    }
  }
  for (const field of ["dependencies", "devDependencies", "overrides"]) repoint(field)
  const missing = Object.keys(tarballs).filter((name) => manifest.overrides?.[name] === undefined)
  if (missing.length > 0) fail(`${example}: its overrides do not name ${missing.join(", ")}`)
  fs.writeFileSync(file, JSON.stringify(manifest, null, 2) + "\n")
}

/** The environment without tillflow's settings (CI's DATABASE_URL among them): the defaults. */
const defaultsOnly = (env) =>
  Object.fromEntries(
    Object.entries(env).filter(
      ([key]) => key !== "DATABASE_URL" && !key.startsWith("TERMINAL_CLOUD_") && !key.startsWith("TILLFLOW_")
    )
  )

/** Starts the example, waits for its line, posts a sale; stops it whatever happens. */
const sellThrough = async (dir, name) => {
  const port = await freePort()
  const child = spawn("npm", ["start", "--silent"], {
    cwd: dir,
    env: { ...defaultsOnly(process.env), PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  let output = ""
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} printed no "listening on" line in ${startTimeoutMs / 1000} s`)),
      startTimeoutMs
    )
    const onData = (chunk) => {
      output += chunk.toString()
      if (output.includes(`listening on http://127.0.0.1:${port}`)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${code}) before listening`))
    })
  })
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      const killer = setTimeout(() => process.kill(-child.pid, "SIGKILL"), 15_000)
      child.once("exit", () => {
        clearTimeout(killer)
        resolve()
      })
      process.kill(-child.pid, "SIGTERM")
    })
  try {
    await ready
    const post = async (route, payload) => {
      const response = await globalThis.fetch(`http://127.0.0.1:${port}${route}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(payload),
        signal: globalThis.AbortSignal.timeout(saleTimeoutMs)
      })
      const body = await response.text()
      if (response.status !== 200 || !body.includes('"outcome":"approved"'))
        fail(`${name}: POST ${route} answered ${response.status} ${body}`)
      process.stdout.write(`${name}: POST ${route} → ${response.status} ${body}\n`)
      return JSON.parse(body)
    }
    const sale = await post("/sales", { amount: "10.50", currency: "EUR" })
    if (typeof sale.efttransactionID !== "string") fail(`${name}: the sale's answer has no efttransactionID`)
    await post("/refunds", { originalTransactionId: sale.efttransactionID, amount: "10.50", currency: "EUR" })
  } catch (error) {
    process.stderr.write(`--- ${name}'s output\n${output}\n---\n`)
    throw error
  } finally {
    await stop()
  }
}

/** One effect in the tree: the packages take the host's (a peer dependency). */
const oneEffect = (dir, name) => {
  const effects = spawnSync("npm", ["ls", "effect", "--all", "--parseable"], { cwd: dir, encoding: "utf8" })
  const copies = new Set(effects.stdout.split("\n").filter((line) => line.trim() !== ""))
  if (copies.size !== 1)
    fail(`${name}: ${copies.size} copies of effect installed:\n${[...copies].join("\n")}`)
}

/**
 * The install the README and docs/embedding.md give: into an empty project, every tarball and
 * the peers in one `npm install` (no overrides, nothing from the registry under @tillflow/);
 * then every package's entry point imported by plain `node`.
 */
const readmeInstall = (dir, tarballs) => {
  process.stdout.write("\n== the README's install: every tarball and the peers, in one npm install\n")
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name: "a-backend", version: "1.0.0", private: true, type: "module" }, null, 2) + "\n"
  )
  run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--loglevel=error", ...Object.values(tarballs), ...peers()],
    dir
  )
  oneEffect(dir, "the README's install")
  const imports = Object.keys(tarballs)
    .map((name) => `await import(${JSON.stringify(name)})`)
    .join(";")
  run(
    "node",
    [
      "--input-type=module",
      "-e",
      `${imports};console.log("imported ${Object.keys(tarballs).length} packages")`
    ],
    dir
  )
}

const main = async () => {
  const wanted = process.argv.slice(2)
  const examplesDir = path.join(repository, "examples")
  const examples = fs
    .readdirSync(examplesDir)
    .filter((name) => fs.existsSync(path.join(examplesDir, name, "package.json")))
    .filter((name) => wanted.length === 0 || wanted.includes(name))
  if (examples.length === 0) fail(`no example to check under ${examplesDir}`)

  run("npm", ["run", "build"], repository)
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), "tillflow-pack-check-"))
  try {
    const tarballDir = path.join(temp, "tarballs")
    fs.mkdirSync(tarballDir)
    const tarballs = packAll(tarballDir)
    readmeInstall(path.join(temp, "readme-install"), tarballs)
    for (const name of examples) {
      process.stdout.write(`\n== example ${name}\n`)
      const dir = path.join(temp, name)
      copyExample(path.join(examplesDir, name), dir)
      pointAtTarballs(dir, tarballs)
      run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], dir)
      for (const pkg of Object.keys(tarballs)) {
        const installed = path.join(dir, "node_modules", pkg)
        if (fs.existsSync(installed) && fs.lstatSync(installed).isSymbolicLink())
          fail(`${pkg} is a link, not installed`)
        fs.rmSync(path.join(installed, "src"), { recursive: true, force: true })
      }
      oneEffect(dir, name)
      run("npm", ["run", "build"], dir)
      await sellThrough(dir, name)
    }
    process.stdout.write(
      `\npack check: ${Object.keys(tarballs).length} packages packed and installed as the README says, ` +
        `${examples.length} examples sold and refunded through\n`
    )
  } finally {
    if (process.env.TILLFLOW_PACK_CHECK_KEEP) process.stdout.write(`kept ${temp}\n`)
    else fs.rmSync(temp, { recursive: true, force: true })
  }
}

main().catch((error) => {
  process.stderr.write(`pack check failed: ${error.message}\n`)
  process.exit(1)
})
