import { describe, expect, it } from "@effect/vitest"
import { packageName } from "@tillflow/core"

describe("@tillflow/core", () => {
  it("resolves through the workspace by its package name", () => {
    expect(packageName).toBe("@tillflow/core")
  })
})
