/**
 * The claim: due executions taken for a worker in one statement, `FOR UPDATE SKIP LOCKED`
 * so concurrent claimers never block on nor take the same row, each leased until
 * `now + leaseMs` and holding its concurrency key, with the next due time read in the
 * same snapshot; with a `tenantLimit`, no tenant past its fair share.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { ExecutionQueue } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as NextDue from "./NextDue.js"
import { decodeClaimedWithNext, failure } from "./Rows.js"
import * as Statements from "./Statements.js"

/** The claim operations of one queue. */
export interface Claim {
  readonly claim: (
    options: Statements.ClaimOptions
  ) => Effect.Effect<ReadonlyArray<ExecutionQueue.Claim>, ExecutionQueue.ExecutionQueueError>
  readonly claimWithNextDue: (
    options: Statements.ClaimOptions
  ) => Effect.Effect<ExecutionQueue.ClaimResult, ExecutionQueue.ExecutionQueueError>
}

/**
 * The claims of a queue over `sql`; with `streamVersions`, each claim also answers its
 * execution's stream version (see `Options.streamVersions` of `SqlExecutionQueue`). Each
 * claim then gives `advanceFloors` its `now` (see `Floors`).
 */
export const make = (
  sql: SqlClient.SqlClient,
  streamVersions: boolean,
  advanceFloors: (now: number) => Effect.Effect<void>
): Claim => {
  // The claimed execution's stream version, read by the claiming statement: its snapshot
  // holds every append committed before the claim began, and the rows it can claim were
  // released, or their lease ran out, before that (a row locked or changed since is
  // skipped or re-checked against its newest state), so an engine that holds the history
  // at this version has missed nothing the previous holder recorded in time. A zombie
  // holder appending after the claim is caught by the exact-version append, as it was
  // when the engine read the stream right after the claim.
  const streamVersion = Statements.streamVersionColumn(sql, streamVersions)

  /**
   * One statement (its own transaction, or part of the caller's): the due candidates are
   * locked (`SKIP LOCKED`: concurrent claimers never wait on nor take the same row),
   * started ones first, then new ones, each oldest due first, each part on its own partial
   * index (`3_claim_started_first`), new ones only in the places the started ones left.
   * For the candidates with a concurrency key, one per key (the first in that order)
   * upserts the key's holder row: the no-op update locks it and returns the holder, either
   * this execution (acquired now or before) or another one (then it is not claimed). Holder
   * rows are locked in key order by every claimer, so two claimers can wait on each other's
   * keys but never in a cycle (no deadlock). The granted candidates are leased. One more
   * row answers the earliest due time after `now` (`claimWithNextDue`), read in the
   * claim's snapshot, so the rows it leases count with their due times before the claim
   * (not after `now`).
   */
  const claimWithNextDue = (
    options: Statements.ClaimOptions
  ): Effect.Effect<ExecutionQueue.ClaimResult, ExecutionQueue.ExecutionQueueError> => {
    if (options.workflowNames.length === 0) return Effect.succeed({ claims: [], nextDueAt: Option.none() })
    if (options.limit <= 0) {
      return Effect.map(NextDue.afterNow(sql, options.workflowNames, options.now), (nextDueAt) => ({
        claims: [],
        nextDueAt
      }))
    }
    const leaseUntil = options.now + options.leaseMs
    return Statements.claim(sql, options, leaseUntil, streamVersion).pipe(
      Effect.flatMap(decodeClaimedWithNext),
      Effect.map((rows) => {
        const claims: Array<ExecutionQueue.Claim> = []
        let nextDueAt: Option.Option<number> = Option.none()
        for (const row of rows) {
          if (row.execution_id === null) {
            nextDueAt = Option.fromNullable(row.next_due)
            continue
          }
          claims.push({
            executionId: row.execution_id,
            workflowName: row.workflow_name ?? "",
            parentId: row.parent_id,
            claims: row.claims ?? 0,
            leaseUntil,
            streamVersion: row.stream_version ?? undefined
          })
        }
        return { claims, nextDueAt }
      }),
      Effect.mapError(failure("claim")),
      // After the claim, not before: the claim never waits for an advance's lock.
      Effect.tap(() => advanceFloors(options.now))
    )
  }

  return {
    claim: (options) => Effect.map(claimWithNextDue(options), (result) => result.claims),
    claimWithNextDue
  }
}
