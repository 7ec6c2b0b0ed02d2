/**
 * @tillflow/callback: the receiver of terminal results delivered to a callback address
 * (AUTH-TOKEN check in constant time, durable append, dedupe, workflow wake-up), as logic
 * (`CallbackReceiver`) and as HTTP (`CallbackHttp`, mountable or standalone).
 */
export * as CallbackHttp from "./CallbackHttp.js"
export * as CallbackReceiver from "./CallbackReceiver.js"
