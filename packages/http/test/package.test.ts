import { describe, expect, it } from "@effect/vitest"
import { packageName } from "@tillflow/http"

describe("@tillflow/http", () => {
  it("resolves through the workspace by its package name", () => {
    expect(packageName).toBe("@tillflow/http")
  })
})
