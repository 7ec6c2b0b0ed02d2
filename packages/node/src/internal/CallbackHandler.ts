/**
 * `tf.callbackHandler`: the callback receiver of `@tillflow/callback` (`CallbackHttp.app`)
 * as a `node:http` request handler, so that a host mounts it in its own server (Express,
 * Fastify, node:http). The attempt is the last segment of the path, wherever the host
 * mounted the handler (`app.post("/callbacks/:id", h)`, `app.use("/callbacks", h)`). The
 * body is read by the receiver: mount it before any body parser.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { CallbackHttp, type CallbackReceiver } from "@tillflow/callback"
import type * as Effect from "effect/Effect"
import type { IncomingMessage, ServerResponse } from "node:http"

/** A `node:http` request handler. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void

/** The last path segment of a URL (its query left aside). */
const lastSegment = (url: string): string => {
  const path = url.split(/[?#]/, 1)[0] ?? ""
  const segments = path.split("/").filter((s) => s.length > 0)
  return segments[segments.length - 1] ?? ""
}

/** The handler, over the callback receiver in context. */
export const make: Effect.Effect<NodeHandler, never, CallbackReceiver.CallbackReceiver> =
  NodeHttpServer.makeHandler(CallbackHttp.app)

/** Wraps the receiver's handler: the path normalised, a body already parsed by the host refused clearly. */
export const mountable =
  (handler: NodeHandler): NodeHandler =>
  (req, res) => {
    const host = req as IncomingMessage & { readonly originalUrl?: string }
    // A body parser of the host (express.json(), Fastify's) read the stream: nothing is left to read.
    if (req.readableEnded) {
      res.statusCode = 500
      res.setHeader("content-type", "application/json")
      res.end(
        JSON.stringify({
          _tag: "BodyAlreadyRead",
          message:
            "the request body was read by a body parser before tf.callbackHandler: mount the handler before express.json() or any other body parser (in Fastify, leave the route's body unparsed)"
        })
      )
      return
    }
    req.url = `/callbacks/${lastSegment(host.originalUrl ?? req.url ?? "")}`
    handler(req, res)
  }
