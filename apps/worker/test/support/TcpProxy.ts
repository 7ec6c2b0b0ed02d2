/**
 * A TCP proxy for outage tests: a worker connects to PostgreSQL through it, and the test
 * cuts it (every connection reset, new ones refused) and restores it (same port) to make
 * the store unreachable and reachable again without touching the server.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Net from "node:net"

/** A running proxy. */
export interface TcpProxy {
  readonly port: number
  /** Resets every connection and refuses new ones. */
  readonly cut: Effect.Effect<void>
  /** Accepts connections again, on the same port. */
  readonly restore: Effect.Effect<void>
}

const listen = (server: Net.Server, port: number) =>
  Effect.async<number>((resume) => {
    server.listen(port, "127.0.0.1", () => {
      const address = server.address()
      resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : port))
    })
  })

/** A proxy on a free loopback port to `host:port`, closed with the scope. */
export const make = (target: {
  readonly host: string
  readonly port: number
}): Effect.Effect<TcpProxy, never, Scope.Scope> =>
  Effect.gen(function* () {
    const sockets = new Set<Net.Socket>()
    const server = Net.createServer((client) => {
      const upstream = Net.connect(target.port, target.host)
      sockets.add(client)
      sockets.add(upstream)
      const drop = () => {
        client.destroy()
        upstream.destroy()
        sockets.delete(client)
        sockets.delete(upstream)
      }
      client.on("error", drop).on("close", drop)
      upstream.on("error", drop).on("close", drop)
      client.pipe(upstream)
      upstream.pipe(client)
    })
    const port = yield* listen(server, 0)
    const cut = Effect.async<void>((resume) => {
      for (const socket of sockets) socket.resetAndDestroy()
      sockets.clear()
      if (!server.listening) return resume(Effect.void)
      server.close(() => resume(Effect.void))
    })
    yield* Effect.addFinalizer(() => cut)
    return { port, cut, restore: Effect.asVoid(listen(server, port)) }
  })
