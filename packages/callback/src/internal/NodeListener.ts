/**
 * The callback route as a plain `node:http` request listener: the same checks and answers
 * as `CallbackHttp.app` (the declared and the streamed body bounded, the token and the
 * body handed to `CallbackReceiver`, 200 only once the result is appended), without
 * @effect/platform's server per request (its request object, the handled app's fiber,
 * middleware, span and response conversion): one fiber per delivery, the receiver's own.
 */
import { RemoteApi } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type { IncomingMessage, ServerResponse } from "node:http"
import * as CallbackReceiver from "../CallbackReceiver.js"

/** `POST /callbacks/<attemptId>`, a query string ignored. */
export const callbackUrl = /^\/callbacks\/([^/?#]+)(?:\?[^#]*)?$/

/** The path segment decoded, or as sent when it is not valid percent-encoding. */
export const segment = (raw: string): string => {
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

const received = Buffer.from('{"received":true}')

/**
 * Writes a reply: 200 `{"received":true}`, 400 with its JSON error, 503 with its JSON reason
 * and `Retry-After`, the refusals (401, 403, 404, 413) empty.
 */
const write = (response: ServerResponse, reply: CallbackReceiver.Reply, close: boolean): void => {
  if (response.headersSent) return
  const headers: Record<string, string | number> = close ? { connection: "close" } : {}
  if (reply.status === 200) {
    response.writeHead(200, {
      ...headers,
      "content-type": "application/json",
      "content-length": received.length
    })
    response.end(received)
  } else if (reply._tag === "Refused" && reply.status === 400) {
    const body = Buffer.from(
      JSON.stringify({ _tag: reply.reason, message: reply.message ?? "the body is not a JSON object" })
    )
    response.writeHead(400, { ...headers, "content-type": "application/json", "content-length": body.length })
    response.end(body)
  } else if (reply._tag === "Unavailable") {
    response.writeHead(503, {
      ...headers,
      "content-type": "application/json",
      "content-length": unavailableBody.length,
      "retry-after": String(CallbackReceiver.unavailableAnswer.retryAfterSeconds)
    })
    response.end(unavailableBody)
  } else {
    response.writeHead(reply.status, { ...headers, "content-length": 0 })
    response.end()
  }
}

const unavailableBody = Buffer.from(
  JSON.stringify({ _tag: "Unavailable", message: CallbackReceiver.unavailableAnswer.message })
)

const empty = (response: ServerResponse, status: number): void => {
  if (response.headersSent) return
  response.writeHead(status, { "content-length": 0 })
  response.end()
}

/**
 * A `node:http` listener serving `POST /callbacks/:attemptId` with the receiver in context,
 * on that context's runtime (its logger and services). Any other method or path: `other`
 * if given, else 404.
 */
export const make = (
  other?: (request: IncomingMessage, response: ServerResponse) => void
): Effect.Effect<
  (request: IncomingMessage, response: ServerResponse) => void,
  never,
  CallbackReceiver.CallbackReceiver
> =>
  Effect.gen(function* () {
    const receiver = yield* CallbackReceiver.CallbackReceiver
    const runtime = yield* Effect.runtime<never>()
    const run = Runtime.runCallback(runtime)
    const max = CallbackReceiver.maxBodyBytes

    const answer = (
      response: ServerResponse,
      effect: Effect.Effect<CallbackReceiver.Reply>,
      close: boolean
    ) =>
      run(effect, {
        // The receiver answers every failure itself (503); a defect is the server's error.
        onExit: (exit) => {
          if (exit._tag === "Success") return write(response, exit.value, close)
          empty(response, 500)
          run(Effect.logError("a callback delivery failed unexpectedly", exit.cause))
        }
      })

    return (request, response) => {
      const match = request.method === "POST" ? callbackUrl.exec(request.url ?? "") : null
      const raw = match?.[1]
      if (raw === undefined) {
        if (other !== undefined) other(request, response)
        else {
          request.resume()
          empty(response, 404)
        }
        return
      }
      const attemptId = segment(raw)
      const remoteAddress = request.socket.remoteAddress
      const declared = Number(request.headers["content-length"] ?? "0")
      if (Number.isFinite(declared) && declared > max) {
        // Not read: the connection is closed after the answer.
        answer(response, receiver.refuse(attemptId, "TooLarge", remoteAddress), true)
        return
      }
      const chunks: Array<Buffer> = []
      let size = 0
      let done = false
      request.on("data", (chunk: Buffer) => {
        if (done) return
        size += chunk.length
        if (size > max) {
          // The rest is read and dropped; the connection is closed after the answer.
          done = true
          chunks.length = 0
          answer(response, receiver.refuse(attemptId, "TooLarge", remoteAddress), true)
        } else chunks.push(chunk)
      })
      request.on("error", () => {
        if (done) return
        done = true
        answer(
          response,
          receiver.refuse(attemptId, "MalformedBody", remoteAddress, "the body could not be read"),
          true
        )
      })
      request.on("end", () => {
        if (done) return
        done = true
        const token = request.headers[authTokenHeader]
        const text = Buffer.concat(chunks, size).toString("utf8")
        answer(
          response,
          receiver.receive({
            attemptId,
            token: typeof token === "string" && token.length > 0 ? Option.some(token) : Option.none(),
            body: text,
            remoteAddress
          }),
          false
        )
      })
    }
  })

const authTokenHeader = RemoteApi.AUTH_TOKEN_HEADER.toLowerCase()
