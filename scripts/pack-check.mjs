/**
 * The pack check: the library packages as a user installs them. It builds the workspace
 * (`npm run build`), packs every library package (`npm pack`) into a temporary directory and
 * checks each tarball holds the JavaScript and declarations its `exports` name. Then, for
 * every directory under `examples/`, it copies the example out of the repository, points its
 * `@tillflow/*` dependencies at the tarballs (no workspace links: npm installs them as it
 * would from the registry, the rest from the registry), installs, deletes the tarballs'
 * TypeScript sources (nothing may need them), type-checks and builds the example with its own
 * `tsc` (`npm run build`), starts it with plain `node` (`npm start`: no tsx, no loader) on a
 * free port, and posts a sale, which must come back approved. It also checks the install
 * holds one copy of `effect` (the packages take the host's: a peer dependency).
 *
 * The convention every example follows: scripts `build` and `start`; it listens on `PORT` at
 * 127.0.0.1 and prints `listening on http://127.0.0.1:<port>` once ready; `POST /sales` with
 * `{"amount":"10.50","currency":"EUR"}` answers 200 with `"outcome":"approved"`; with nothing
 * configured it runs on the embedded store and the built-in simulator.
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
import { fileURLToPath, URL } from "node:url"

const repository = fileURLToPath(new URL("../", import.meta.url))
const startTimeoutMs = 180_000
const saleTimeoutMs = 120_000

const fail = (message) => {
  throw new Error(message)
}

/** Runs a command to its end, its output shown; throws when it fails. */
const run = (command, args, cwd, env = {}) => {
  process.stdout.write(`$ ${[command, ...args].join(" ")}   (in ${path.relative(repository, cwd) || "."})\n`)
  const result = spawnSync(command, args, { cwd, stdio: "inherit", env: { ...process.env, ...env } })
  if (result.status !== 0) fail(`${command} ${args.join(" ")} failed in ${cwd} (exit ${result.status})`)
}

/** The library packages: every non-private package under packages/. */
const libraries = () =>
  fs
    .readdirSync(path.join(repository, "packages"))
    .map((dir) => path.join(repository, "packages", dir))
    .filter((dir) => fs.existsSync(path.join(dir, "package.json")))
    .map((dir) => ({ dir, manifest: JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) }))
    .filter(({ manifest }) => manifest.private !== true)

/** Every file an export condition names exists in the tarball (a pattern: at least one match). */
const checkTarball = (name, manifest, files) => {
  const has = (file) => files.includes(file.replace(/^\.\//, ""))
  const matches = (pattern) => {
    const [prefix, suffix] = pattern.replace(/^\.\//, "").split("*")
    return files.some((file) => file.startsWith(prefix) && file.endsWith(suffix))
  }
  for (const [entry, target] of Object.entries(manifest.exports ?? {})) {
    if (target === null) continue
    // A plain path is not a module of the library's API (the package's own package.json, a
    // build script): it need only be in the tarball.
    if (typeof target === "string") {
      if (!has(target)) fail(`${name}: export "${entry}" names ${target}, not in the tarball`)
      continue
    }
    for (const condition of ["types", "import"]) {
      const file = target[condition]
      if (typeof file !== "string") fail(`${name}: export "${entry}" has no "${condition}" condition`)
      if (!(file.includes("*") ? matches(file) : has(file)))
        fail(`${name}: export "${entry}" names ${file}, not in the tarball`)
    }
  }
  const js = files.filter((file) => file.startsWith("dist/") && file.endsWith(".js"))
  const dts = files.filter((file) => file.startsWith("dist/") && file.endsWith(".d.ts"))
  if (js.length === 0 || dts.length === 0) fail(`${name}: the tarball holds no dist/*.js or dist/*.d.ts`)
  for (const required of ["package.json", "LICENSE"])
    if (!has(required)) fail(`${name}: the tarball has no ${required}`)
  if (files.some((file) => file.endsWith(".tsbuildinfo"))) fail(`${name}: the tarball holds a .tsbuildinfo`)
  return { js: js.length, dts: dts.length }
}

/** Packs every library package into `into`; returns name → tarball path. */
const packAll = (into) => {
  const tarballs = {}
  for (const { dir, manifest } of libraries()) {
    const result = spawnSync("npm", ["pack", "--json", "--pack-destination", into], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, npm_config_loglevel: "error" }
    })
    if (result.status !== 0) fail(`npm pack of ${manifest.name} failed:\n${result.stderr}`)
    const [packed] = JSON.parse(result.stdout)
    const files = packed.files.map((file) => file.path)
    const counts = checkTarball(manifest.name, manifest, files)
    tarballs[manifest.name] = path.join(into, packed.filename)
    process.stdout.write(
      `packed ${packed.filename}: ${files.length} files, ${counts.js} .js, ${counts.dts} .d.ts\n`
    )
  }
  return tarballs
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

/** The example's manifest with every @tillflow/* dependency (direct or not) on the tarballs. */
const pointAtTarballs = (dir, tarballs) => {
  const file = path.join(dir, "package.json")
  const manifest = JSON.parse(fs.readFileSync(file, "utf8"))
  const spec = (name) => `file:${tarballs[name]}`
  for (const field of ["dependencies", "devDependencies"]) {
    for (const name of Object.keys(manifest[field] ?? {})) {
      if (!name.startsWith("@tillflow/")) continue
      if (tarballs[name] === undefined)
        fail(`${path.basename(dir)} depends on ${name}, which no package of packages/ is`)
      manifest[field][name] = spec(name)
    }
  }
  // The tarballs depend on each other by version (0.1.0), which the registry may not hold.
  manifest.overrides = Object.fromEntries(Object.keys(tarballs).map((name) => [name, spec(name)]))
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
    const response = await globalThis.fetch(`http://127.0.0.1:${port}/sales`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ amount: "10.50", currency: "EUR" }),
      signal: globalThis.AbortSignal.timeout(saleTimeoutMs)
    })
    const body = await response.text()
    if (response.status !== 200 || !body.includes('"outcome":"approved"')) {
      fail(`${name}: POST /sales answered ${response.status} ${body}`)
    }
    process.stdout.write(`${name}: POST /sales → ${response.status} ${body}\n`)
  } catch (error) {
    process.stderr.write(`--- ${name}'s output\n${output}\n---\n`)
    throw error
  } finally {
    await stop()
  }
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
      // One effect in the tree: the packages take the host's (a peer dependency).
      const effects = spawnSync("npm", ["ls", "effect", "--all", "--parseable"], {
        cwd: dir,
        encoding: "utf8"
      })
      const copies = new Set(effects.stdout.split("\n").filter((line) => line.trim() !== ""))
      if (copies.size !== 1)
        fail(`${name}: ${copies.size} copies of effect installed:\n${[...copies].join("\n")}`)
      run("npm", ["run", "build"], dir)
      await sellThrough(dir, name)
    }
    process.stdout.write(
      `\npack check: ${Object.keys(tarballs).length} packages packed, ${examples.length} examples sold through\n`
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
