/**
 * SHA-256 with `node:crypto`: synchronous and several times faster than Web Crypto's
 * per-call promise for the small texts of a hash chain. Same digest, so the SQL stores and
 * the memory store (Web Crypto) compute identical chains.
 */
import type { HashChain } from "@tillflow/core"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"

export const sha256: HashChain.Sha256 = (text) =>
  Effect.sync(() => createHash("sha256").update(text, "utf8").digest("hex"))
