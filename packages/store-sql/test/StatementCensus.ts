/**
 * The statements an effect sends through @effect/sql, for the store-sql tests that check
 * how many statements of which kind a call makes (group commit, skipped head reads).
 */
import * as Statement from "@effect/sql/Statement"
import * as Effect from "effect/Effect"

/**
 * Runs `effect` and lists the statements it sent (and the fibers it forked sent): a
 * statement transformer sees every statement the fiber executes, named by `kindOf` from
 * its compiled text.
 */
export const statementsOf =
  (kindOf: (text: string) => string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      const sent: Array<string> = []
      const result = yield* Statement.withTransformer(effect, (statement) =>
        Effect.sync(() => {
          sent.push(kindOf(statement.compile()[0]))
          return statement
        })
      )
      return { result, sent }
    })
