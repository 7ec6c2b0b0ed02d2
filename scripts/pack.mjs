/**
 * Packs the library packages as a backend installs them until they are on the npm registry:
 * builds the workspace (`npm run build`), packs every library package (`npm pack`) into one
 * directory (`build/packages/` by default) under a name without its version
 * (`tillflow-node.tgz`, so the examples and a backend's `package.json` can name it for
 * good), checks each tarball holds what its `exports` name, and prints the command that
 * installs them. The tarballs depend on each other by version: install them together, in one
 * `npm install`, and npm takes each sibling from the tarballs instead of the registry.
 *
 * Usage: `npm run pack:packages` (`node scripts/pack.mjs [--out <dir>] [--no-build]`).
 * `scripts/pack-check.mjs` packs with the same code and installs the examples from it.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import process from "node:process"
import { fileURLToPath, URL } from "node:url"

export const repository = fileURLToPath(new URL("../", import.meta.url))

/** The peers a backend installs beside the tarballs (one copy each, shared with tillflow). */
export const peers = () => {
  const all = new Map()
  for (const { manifest } of libraries())
    for (const [name, version] of Object.entries(manifest.peerDependencies ?? {}))
      if (!(manifest.peerDependenciesMeta?.[name]?.optional ?? false)) all.set(name, version)
  return [...all].sort().map(([name, version]) => `${name}@${version}`)
}

const fail = (message) => {
  throw new Error(message)
}

/** Runs a command to its end, its output shown; throws when it fails. */
export const run = (command, args, cwd, env = {}) => {
  process.stdout.write(`$ ${[command, ...args].join(" ")}   (in ${path.relative(repository, cwd) || "."})\n`)
  const result = spawnSync(command, args, { cwd, stdio: "inherit", env: { ...process.env, ...env } })
  if (result.status !== 0) fail(`${command} ${args.join(" ")} failed in ${cwd} (exit ${result.status})`)
}

/** The library packages: every non-private package under packages/. */
export const libraries = () =>
  fs
    .readdirSync(path.join(repository, "packages"))
    .map((dir) => path.join(repository, "packages", dir))
    .filter((dir) => fs.existsSync(path.join(dir, "package.json")))
    .map((dir) => ({ dir, manifest: JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) }))
    .filter(({ manifest }) => manifest.private !== true)

/** The file a package is packed to: `@tillflow/node` → `tillflow-node.tgz`. */
export const tarballName = (name) => `${name.replace(/^@/, "").replace("/", "-")}.tgz`

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

/** Packs every built library package into `into`; returns package name → tarball path. */
export const packAll = (into) => {
  fs.mkdirSync(into, { recursive: true })
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
    const target = path.join(into, tarballName(manifest.name))
    fs.renameSync(path.join(into, packed.filename), target)
    tarballs[manifest.name] = target
    process.stdout.write(
      `packed ${manifest.name}@${manifest.version} → ${path.relative(repository, target) || target}: ` +
        `${files.length} files, ${counts.js} .js, ${counts.dts} .d.ts\n`
    )
  }
  return tarballs
}

const main = () => {
  const args = process.argv.slice(2)
  const outAt = args.indexOf("--out")
  const out = path.resolve(
    outAt >= 0 ? (args[outAt + 1] ?? fail("--out needs a directory")) : "build/packages"
  )
  if (!args.includes("--no-build")) run("npm", ["run", "build"], repository)
  const tarballs = packAll(out)
  process.stdout.write(
    `\n${Object.keys(tarballs).length} packages packed into ${out}. In your backend, install them together:\n\n` +
      `  npm install ${Object.values(tarballs).join(" ")} ${peers().join(" ")}\n`
  )
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main()
  } catch (error) {
    process.stderr.write(`pack failed: ${error.message}\n`)
    process.exit(1)
  }
}
