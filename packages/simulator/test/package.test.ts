import { describe, expect, it } from "@effect/vitest"
import { packageName } from "@tillflow/simulator"

describe("@tillflow/simulator", () => {
  it("resolves through the workspace by its package name", () => {
    expect(packageName).toBe("@tillflow/simulator")
  })
})
