/**
 * SHA-256 of a text's UTF-8 bytes, synchronous, from @noble/hashes (audited, no
 * dependencies, platform-free): for the short texts the engine derives identifiers and
 * chain links from, a synchronous digest costs a few microseconds, where Web Crypto's
 * `digest` costs a promise, a hop to the thread pool and a fiber suspension per call. The
 * engine cannot import `node:crypto`; adapters on Node pass theirs (store-sql). The digest
 * is the standard one (tests compare it with Web Crypto's and pin known answers).
 */
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js"
import { utf8ToBytes } from "@noble/hashes/utils.js"

/** The SHA-256 digest (32 bytes) of the UTF-8 encoding of `text`. */
export const sha256 = (text: string): Uint8Array => nobleSha256(utf8ToBytes(text))
