/**
 * The architecture's boundaries are kept by ESLint (`eslint.config.js`, run by
 * `npm run lint` in CI). These tests lint small probe sources as if they sat at a given
 * place in the tree, so a boundary that stops being enforced (a glob that no longer
 * matches after a move, a pattern that lets a layer climb) fails here.
 */
import { describe, expect, it } from "@effect/vitest"
import { ESLint } from "eslint"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
const eslint = new ESLint({ cwd: root })

const violations = async (filePath: string, source: string): Promise<ReadonlyArray<string>> => {
  const [result] = await eslint.lintText(source, { filePath: Path.join(root, filePath) })
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === "no-restricted-imports")
    .map((message) => message.message)
}

describe("architecture boundaries (ESLint)", () => {
  it("a core layer importing a layer above it is refused", async () => {
    const found = await violations(
      "packages/core/src/model/Probe.ts",
      'import * as PaymentProtocol from "../terminal/PaymentProtocol.js"\nexport const probe = PaymentProtocol\n'
    )
    expect(found).toHaveLength(1)
    expect(found[0]).toContain("imports only the layers below it")
    expect(
      await violations(
        "packages/core/src/terminal/internal/Probe.ts",
        'import * as Ledger from "../../projections/Ledger.js"\nexport const probe = Ledger\n'
      )
    ).toHaveLength(1)
    expect(
      await violations(
        "packages/core/src/lifecycle/Probe.ts",
        'import * as Scripted from "../testing/ScriptedTerminalCloud.js"\nexport const probe = Scripted\n'
      )
    ).toHaveLength(1)
  })

  it("a core layer importing a layer below it is allowed", async () => {
    expect(
      await violations(
        "packages/core/src/lifecycle/Probe.ts",
        'import * as Money from "../model/Money.js"\nimport * as Outcome from "../terminal/OperationOutcome.js"\nexport const probe = [Money, Outcome]\n'
      )
    ).toEqual([])
  })

  it("core imports no adapter, SQL driver or Node module", async () => {
    expect(
      await violations(
        "packages/core/src/terminal/Probe.ts",
        'import * as Fs from "node:fs"\nimport { SqlClient } from "@effect/sql"\nimport { TestDatabase } from "@tillflow/store-sql"\nexport const probe = [Fs, SqlClient, TestDatabase]\n'
      )
    ).toHaveLength(3)
  })

  it("the engine imports no tillflow package", async () => {
    const found = await violations(
      "packages/engine/src/Probe.ts",
      'import { Money } from "@tillflow/core"\nexport const probe = Money\n'
    )
    expect(found).toHaveLength(1)
    expect(found[0]).toContain("the engine knows no payment")
  })

  it("an app imports no other app", async () => {
    expect(
      await violations(
        "apps/cli/src/Probe.ts",
        'import * as Main from "@tillflow/worker"\nimport * as Stack from "../../worker/src/main.js"\nexport const probe = [Main, Stack]\n'
      )
    ).toHaveLength(2)
    expect(
      await violations(
        "apps/cli/src/Probe.ts",
        'import { Intake } from "@tillflow/intake"\nexport const probe = Intake\n'
      )
    ).toEqual([])
  })
})
