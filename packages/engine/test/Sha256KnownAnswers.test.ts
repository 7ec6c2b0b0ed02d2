/**
 * Digests pinned as they were computed before the SHA-256 moved from a hand-written
 * TypeScript implementation to @noble/hashes: the hash chains, derived ids and workflow
 * execution ids already in event stores must not change with the implementation.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as DeterministicId from "../src/DeterministicId.js"
import * as HashChain from "../src/HashChain.js"
import { workflowExecutionId } from "../src/SchemaCache.js"

describe("SHA-256 known answers (unchanged digests)", () => {
  it("the hex digests of texts around the padding boundaries and multi-byte characters", () => {
    const known: ReadonlyArray<readonly [string, string]> = [
      ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
      ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
      ["x".repeat(55), "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"],
      ["x".repeat(64), "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"],
      ["ü€𝄞 terminal/Ré-7", "f595dddd0cbb49c5397b96ae0ddbb98fe73bf89174fc27282a7ba4f8b67f7ca8"]
    ]
    for (const [text, digest] of known)
      expect(HashChain.sha256HexSync(text), JSON.stringify(text)).toBe(digest)
  })

  it("a derived id, a workflow execution id and a chain link", () =>
    Effect.gen(function* () {
      expect(DeterministicId.uuidFromSync("execution-0f3a9c/12/0")).toBe(
        "d153ceba-877d-5046-b44e-5608ede752f5"
      )
      expect(workflowExecutionId("Sale", "order-42")).toBe("5908b9c5591e0abbd5390770076d9da0")
      const link = yield* HashChain.link({
        previousHash: HashChain.genesis,
        streamId: "s-1",
        version: 1,
        type: "Happened",
        schemaVersion: 1,
        dataJson: '{"n":1}',
        metadataJson: "{}"
      })
      expect(link).toBe("eb776db70d4bd5ea4ba1ca19687b4888a861156032f6bb0f2a40e40aa5894c4f")
    }).pipe(Effect.runPromise))
})
