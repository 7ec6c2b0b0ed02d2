/**
 * What `tillflow --help` and `tillflow <command> --help` print: @effect/cli's own help for
 * the command the arguments name (found by its parser, built from the options' descriptions
 * and defaults), laid out to fit 100 columns, its usage lines naming the whole command
 * (`tillflow sale …`), headings in bold only on a terminal and never under `NO_COLOR`.
 *
 * Why not the help `Command.run` prints: it renders each paragraph on one line however long
 * (the command list was 516 columns wide), names a subcommand's usage without `tillflow`,
 * and always prints ANSI escapes; none of that can be configured.
 */
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as Descriptor from "@effect/cli/CommandDescriptor"
import type * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as Usage from "@effect/cli/Usage"
import * as Ansi from "@effect/printer-ansi/Ansi"
import * as AnsiDoc from "@effect/printer-ansi/AnsiDoc"
import * as Doc from "@effect/printer/Doc"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Examples from "./Examples.js"

/** The widest line help prints. */
export const lineWidth = 100

/**
 * How the commands are parsed for help: built-in options (`--completions`, `--log-level`,
 * `--wizard`, `--version`) are listed once, in the top-level help, not under every command.
 */
export const config = CliConfig.make({ showBuiltIns: false })

/** True when the arguments ask for help (`--help` or `-h` before any `--`). */
export const isRequested = (args: ReadonlyArray<string>): boolean => {
  const end = args.indexOf("--")
  const own = end < 0 ? args : args.slice(0, end)
  return own.includes("--help") || own.includes("-h")
}

/** Whether help may use colour: on a terminal, unless `NO_COLOR` is set (no-color.org). */
export const colourFor = (stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean =>
  stream.isTTY === true && (env["NO_COLOR"] ?? "") === ""

/**
 * The help the arguments (without node and the script) ask for, or none when the parser
 * finds no help request in them (then `Command.run` reports what is wrong).
 */
export const render = <Name extends string, R, E, A>(
  root: Command.Command<Name, R, E, A>,
  app: { readonly name: string; readonly version: string },
  args: ReadonlyArray<string>,
  colour: boolean
) =>
  Descriptor.parse(root.descriptor, [app.name, ...args], config).pipe(
    Effect.map((directive) => {
      if (directive._tag !== "BuiltIn" || directive.option._tag !== "ShowHelp") return Option.none()
      const usages = Usage.enumerate(directive.option.usage, config).map(spanText)
      const leaf = usages[0]?.split(" ")[0] ?? app.name
      // The parser names the command alone (`list …`): its group and `tillflow` go before it.
      const group = args.find((arg) => HashMap.has(Command.getSubcommands(root), arg))
      const path =
        leaf === app.name ? [] : [app.name, ...(group !== undefined && group !== leaf ? [group] : [])]
      const body =
        leaf === app.name
          ? Command.getHelp(root, CliConfig.make({ ...config, showBuiltIns: true }))
          : directive.option.helpDoc
      const bold = (text: string) => (colour ? AnsiDoc.render(heading(text), { style: "pretty" }) : text)
      const key = [...path.slice(1), ...(leaf === app.name ? [] : [leaf])].join(" ")
      const shown = Examples.examples[key] ?? []
      return Option.some(
        [
          `${app.name} ${app.version}`,
          "",
          bold("USAGE"),
          "",
          ...usages.map((usage) => usageLine([...path, usage].join(" "))),
          "",
          ...blocks(body).flatMap((doc) => block(doc, bold)),
          ...(shown.length === 0 ? [] : [bold("EXAMPLES"), "", ...shown.flatMap(exampleLines), ""]),
          ""
        ].join("\n")
      )
    })
  )

/** An example as shell lines within `lineWidth`: long ones go on with ` \\` as a shell reads them. */
const exampleLines = (example: string): ReadonlyArray<string> => {
  const words = example.split(" ").filter((word) => word !== "")
  const lines = wrap(["$", ...words], 2, 4, lineWidth - 2)
  return lines.map((line, i) => (i < lines.length - 1 ? `${line} \\` : line))
}

const heading = (text: string): AnsiDoc.AnsiDoc => Doc.annotate(Doc.text(text), Ansi.bold)

/**
 * Words laid out in lines of at most `lineWidth` columns, continuation lines indented by
 * `hang`. By hand: @effect/printer's layout weighs every break of a long document against
 * the rest, which took tens of seconds (and overflowed the stack) on the command list.
 */
const wrap = (
  words: ReadonlyArray<string>,
  indent: number,
  hang: number,
  width: number = lineWidth
): ReadonlyArray<string> => {
  const out: Array<string> = []
  let line = " ".repeat(indent)
  let empty = true
  for (const word of words) {
    if (!empty && line.length + 1 + word.length > width) {
      out.push(line)
      line = " ".repeat(indent + hang) + word
    } else {
      line += (empty ? "" : " ") + word
    }
    empty = false
  }
  out.push(line)
  return out
}

const reflow = (text: string, indent: number, hang = 0) =>
  wrap(
    text.split(/\s+/).filter((w) => w !== ""),
    indent,
    hang
  )

const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    case "Highlight":
    case "Strong":
    case "Weak":
      return spanText(span.value)
  }
}

const blocks = (doc: HelpDoc.HelpDoc): ReadonlyArray<HelpDoc.HelpDoc> =>
  doc._tag === "Sequence" ? [...blocks(doc.left), ...blocks(doc.right)] : doc._tag === "Empty" ? [] : [doc]

/** `$ tillflow sale …`, broken between options, never inside one (`[--delivery callback | polling]`). */
const usageLine = (usage: string): string => {
  const words: Array<string> = []
  let depth = 0
  let word = ""
  for (const char of usage) {
    if (char === " " && depth === 0) {
      if (word !== "") words.push(word)
      word = ""
      continue
    }
    if ("[(<".includes(char)) depth++
    if ("])>".includes(char)) depth--
    word += char
  }
  if (word !== "") words.push(word)
  return wrap(["$", ...words], 0, 4).join("\n")
}

/** A block of a command's help document as lines, followed by a blank one as @effect/cli lays them out. */
const block = (doc: HelpDoc.HelpDoc, bold: (text: string) => string): ReadonlyArray<string> => {
  switch (doc._tag) {
    case "Header":
      return [bold(spanText(doc.value)), ""]
    case "Paragraph":
      return [...reflow(spanText(doc.value), 0), ""]
    case "DescriptionList":
      // An option: its names in bold, then its paragraphs (type, description, default) below.
      return doc.definitions.flatMap(([term, description]) => [
        bold(spanText(term)),
        ...blocks(description).flatMap((paragraph) =>
          paragraph._tag === "Paragraph" ? reflow(spanText(paragraph.value), 2) : []
        ),
        ""
      ])
    case "Enumeration":
      return [...commandList(doc.elements), ""]
    case "Empty":
    case "Sequence":
      return blocks(doc).flatMap((inner) => block(inner, bold))
  }
}

/**
 * The subcommands as `name  what it does`: @effect/cli lists each with its full usage, which
 * its own `--help` shows, padded to the longest, which is what made the list 516 columns wide.
 */
const commandList = (elements: ReadonlyArray<HelpDoc.HelpDoc>): ReadonlyArray<string> => {
  const rows = elements.map((element) => {
    const text = element._tag === "Paragraph" ? spanText(element.value) : ""
    // The library pads the usage column with at least two spaces; a usage has single ones.
    const [usage = "", ...description] = text.split(/ {2,}/)
    const words = usage.split(" ")
    const firstOption = words.findIndex((word) => /^[[(<-]/.test(word))
    return {
      name: words.slice(0, firstOption < 0 ? undefined : firstOption).join(" "),
      description: description.join(" ")
    }
  })
  const width = Math.max(...rows.map((row) => row.name.length)) + 2
  return rows.flatMap((row) => {
    const [first = "", ...rest] = reflow(row.description, 2 + width)
    return [`  ${row.name.padEnd(width)}${first.trimStart()}`, ...rest]
  })
}

/**
 * A command descriptor as @effect/cli builds it (its variants are not exported): a command
 * (`Standard`, `GetUserInput`), one mapped (`Map`), or one with subcommands (`Subcommands`).
 */
interface DescriptorNode {
  readonly _tag: string
  readonly name?: string
  readonly command?: DescriptorNode
  readonly parent?: DescriptorNode
  readonly children?: ReadonlyArray<DescriptorNode>
}

/** A descriptor's name and the descriptors of its subcommands. */
const node = (
  d: DescriptorNode
): { readonly name: string; readonly children: ReadonlyArray<DescriptorNode> } => {
  switch (d._tag) {
    case "Map":
      return d.command === undefined ? { name: "", children: [] } : node(d.command)
    case "Subcommands":
      return { name: d.parent === undefined ? "" : node(d.parent).name, children: d.children ?? [] }
    default:
      return { name: d.name ?? "", children: [] }
  }
}

/** Every command's path below the root (`[]`, `["sale"]`, `["executions", "list"]` …). */
export const commandPaths = <Name extends string, R, E, A>(
  root: Command.Command<Name, R, E, A>
): ReadonlyArray<ReadonlyArray<string>> => {
  const below = (d: DescriptorNode): ReadonlyArray<ReadonlyArray<string>> =>
    node(d).children.flatMap((child) => {
      const name = node(child).name
      return [[name], ...below(child).map((path) => [name, ...path])]
    })
  return [[], ...below(root.descriptor as unknown as DescriptorNode)]
}

/**
 * The help of every command, plain and with colour, by its path (`"executions list"`):
 * written beside the bundle when it is built, so `bin/tillflow.mjs` answers `--help` without
 * loading the command line (`helpIndex.json`).
 */
export const index = <Name extends string, R, E, A>(
  root: Command.Command<Name, R, E, A>,
  app: { readonly name: string; readonly version: string }
) =>
  Effect.forEach(commandPaths(root), (path) =>
    Effect.all([
      render(root, app, [...path, "--help"], false),
      render(root, app, [...path, "--help"], true)
    ]).pipe(
      Effect.map(([plain, colour]) =>
        Option.isSome(plain) && Option.isSome(colour)
          ? Option.some([path.join(" "), { plain: plain.value, colour: colour.value }] as const)
          : Option.none()
      )
    )
  ).pipe(Effect.map((entries) => Object.fromEntries(entries.flatMap(Option.toArray))))
