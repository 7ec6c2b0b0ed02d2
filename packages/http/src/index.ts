/**
 * @tillflow/http: the `TerminalCloud` port of core over @effect/platform's HttpClient,
 * derived from the shared `RemoteApi` contract, with its configuration, the Node
 * transport and the redaction of secrets from spans, logs and errors.
 */
export * as HttpTerminalCloud from "./HttpTerminalCloud.js"
export * as NodeTransport from "./NodeTransport.js"
export * as Redaction from "./Redaction.js"
export * as TerminalCloudConfig from "./TerminalCloudConfig.js"
