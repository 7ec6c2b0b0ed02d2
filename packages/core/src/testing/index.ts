/**
 * Test doubles of the `TerminalCloud` port: scripted clouds that answer what a test tells
 * them to, for the terminal host and the terminal-less gateway; and samples of every stored
 * event type (`EventSamples`), whose stored forms the golden-file tests pin. Exported from
 * `@tillflow/core/testing` only, so production code cannot reach them by accident.
 */
export * as ScriptedTerminalCloud from "./ScriptedTerminalCloud.js"
export * as ScriptedTerminalLessCloud from "./ScriptedTerminalLessCloud.js"
export * as EventSamples from "./EventSamples.js"
