import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Tenant from "../src/Tenant.js"

describe("Tenant", () => {
  it("a tenant is 1 to 64 letters, digits, '.', '_' or '-'", () => {
    for (const accepted of ["cafe-sol", "a", "A.b_c-9", "x".repeat(64)])
      expect(Tenant.isTenant(accepted)).toBe(true)
    for (const refused of ["", "x".repeat(65), "café", "a b", "a/b", "a:b", "a\n"])
      expect(Tenant.isTenant(refused)).toBe(false)
  })

  it("Id decodes what isTenant accepts, and refuses the rest naming the id as the application does", () => {
    const decode = Schema.decodeUnknownEither(Tenant.Id("a merchant id"))
    expect(decode("cafe-sol")).toEqual(Either.right("cafe-sol"))
    const refused = decode("a b")
    expect(Either.isLeft(refused) && ParseResult.TreeFormatter.formatErrorSync(refused.left)).toBe(
      "a merchant id is 1 to 64 letters, digits, '.', '_' or '-'"
    )
    expect(Either.isLeft(decode(42))).toBe(true)
  })
})
