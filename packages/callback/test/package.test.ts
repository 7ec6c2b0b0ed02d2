import { describe, expect, it } from "@effect/vitest"
import { packageName } from "@tillflow/callback"

describe("@tillflow/callback", () => {
  it("resolves through the workspace by its package name", () => {
    expect(packageName).toBe("@tillflow/callback")
  })
})
