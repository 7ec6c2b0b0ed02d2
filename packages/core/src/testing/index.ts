/**
 * Test doubles of the `TerminalCloud` port: scripted clouds that answer what a test tells
 * them to, for the terminal host and the terminal-less gateway. Exported from
 * `@tillflow/core/testing` only, so production code cannot reach them by accident.
 */
export * as ScriptedTerminalCloud from "./ScriptedTerminalCloud.js"
export * as ScriptedTerminalLessCloud from "./ScriptedTerminalLessCloud.js"
