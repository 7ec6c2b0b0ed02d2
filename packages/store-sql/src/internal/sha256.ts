/**
 * SHA-256 with `node:crypto`: native, faster per byte than the engine's default (@noble/hashes, in JavaScript). Same
 * digest, so the SQL stores and the memory store (core's default) compute identical chains. `crypto.hash` (Node 20.12+), a
 * one-shot digest, where the runtime has it; a `Hash` object otherwise.
 */
import type { HashChain } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"

const oneShot = (crypto as { readonly hash?: (algorithm: string, data: string, encoding: "hex") => string })
  .hash

export const sha256Sync: HashChain.Sha256Sync =
  typeof oneShot === "function"
    ? (text) => oneShot("sha256", text, "hex")
    : (text) => crypto.createHash("sha256").update(text, "utf8").digest("hex")

export const sha256: HashChain.Sha256 = (text) => Effect.sync(() => sha256Sync(text))
