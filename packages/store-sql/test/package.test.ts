import { describe, expect, it } from "@effect/vitest"
import { packageName } from "@tillflow/store-sql"

describe("@tillflow/store-sql", () => {
  it("resolves through the workspace by its package name", () => {
    expect(packageName).toBe("@tillflow/store-sql")
  })
})
