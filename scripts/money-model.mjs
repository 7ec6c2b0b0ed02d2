/**
 * Runs the model-based money test long (issue 28): `npm run test:money-model -- --runs 5000
 * --seed N` runs N's sequences (a random seed when none is given, printed first); a failure
 * prints its seed and path, replayed with `--seed N --path P`. Options: `--runs`, `--seed`,
 * `--path`, `--max-commands`, `--verbose` (every sequence's operations). The test file is
 * packages/node/test/MoneyModel.test.ts; it reads DATABASE_URL as every test does.
 */
import { spawnSync } from "node:child_process"
import * as Path from "node:path"
import process from "node:process"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const args = process.argv.slice(2)
const option = (name) => {
  const index = args.indexOf(`--${name}`)
  return index < 0 ? undefined : args[index + 1]
}
const seed = option("seed") ?? String(Math.floor(Math.random() * 2 ** 31))
const env = {
  ...process.env,
  MONEY_MODEL_RUNS: option("runs") ?? "1000",
  MONEY_MODEL_SEED: seed,
  ...(option("path") === undefined ? {} : { MONEY_MODEL_PATH: option("path") }),
  ...(option("max-commands") === undefined ? {} : { MONEY_MODEL_MAX_COMMANDS: option("max-commands") }),
  ...(args.includes("--verbose") ? { MONEY_MODEL_VERBOSE: "1" } : {})
}
process.stdout.write(
  `money model: ${env.MONEY_MODEL_RUNS} sequences, seed ${seed}${env.MONEY_MODEL_PATH ? `, path ${env.MONEY_MODEL_PATH}` : ""}\n`
)
const run = spawnSync("npx", ["vitest", "run", "packages/node/test/MoneyModel.test.ts"], {
  cwd: root,
  env,
  stdio: "inherit"
})
process.exit(run.status ?? 1)
