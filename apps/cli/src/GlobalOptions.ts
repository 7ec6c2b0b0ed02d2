/**
 * The options every command takes (`--json`, `--worker URL`, `--verbose`/`-v`) accepted
 * before the subcommand too, as a user types them first (`tillflow --worker URL devices`):
 * those given before the first word that is not an option are moved after the command's
 * words, where @effect/cli reads a subcommand's options. Anything else is left where it is.
 */

/** The global flags, and whether each takes a value. */
const globals: ReadonlyMap<string, boolean> = new Map([
  ["--json", false],
  ["--verbose", false],
  ["-v", false],
  ["--worker", true]
])

/** The arguments (without `node` and the script) with the leading global options moved to the end. */
export const hoist = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const moved: Array<string> = []
  let i = 0
  while (i < args.length) {
    const arg = args[i] ?? ""
    const name = arg.startsWith("--") && arg.includes("=") ? arg.slice(0, arg.indexOf("=")) : arg
    const takesValue = globals.get(name)
    if (takesValue === undefined) break
    if (takesValue && name === arg) {
      // `--worker URL`: the value is the next argument (none: leave it for the parser's message).
      if (i + 1 >= args.length) break
      moved.push(arg, args[i + 1] ?? "")
      i += 2
    } else {
      moved.push(arg)
      i += 1
    }
  }
  if (moved.length === 0) return args
  return [...args.slice(i), ...moved]
}
