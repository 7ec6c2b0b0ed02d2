/**
 * `tillflow` run as an operator runs it, from the sources, as a process of its own: its exit
 * code, standard output and standard error. Standard input is empty (a command that would
 * ask on a terminal reads none and says so).
 */
import { spawnSync } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository's root. */
export const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../../..")

/** Runs `tillflow args…` with `env` over this process's environment. */
export const cli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  spawnSync(
    process.execPath,
    ["--conditions=@tillflow/source", "--import", "tsx", "apps/cli/src/main.ts", ...args],
    {
      cwd: root,
      env: { ...process.env, ...env },
      encoding: "utf8",
      timeout: 120_000,
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
