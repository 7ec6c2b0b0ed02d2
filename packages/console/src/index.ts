/** The web console the worker serves at `/console`: its sessions, assets and routes. */
export * as ConsoleAssets from "./ConsoleAssets.js"
export * as ConsoleHttp from "./ConsoleHttp.js"
export * as ConsoleSessions from "./ConsoleSessions.js"
export * as LoginLimiter from "./LoginLimiter.js"
export * as Operators from "./Operators.js"
