/**
 * Tenants: an execution started within a tenant (`Tenant.within`) is that tenant's — its
 * `WorkflowStarted` metadata and its queue row say so, every run of it (after a
 * suspension, on another node) acts for it again, and the children it starts are its
 * tenant's too. Started without one, it has none. A worker with `tenantConcurrency` gives
 * each tenant a fair share: one tenant's flood does not keep another's execution waiting.
 */
import { expect } from "@effect/vitest"
import { Activity, DurableDeferred, Workflow } from "@effect/workflow"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { DurableEngine, EngineEvent, EventStore, ExecutionQueue, Tenant } from "../../index.js"
import { awaitStatus, unique } from "./Executions.js"
import { type EngineTests, manualEngine, provideNode, startNode } from "./Nodes.js"

const startedMetadata = (executionId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const events = yield* store.readStream(EngineEvent.streamId(executionId))
    return events.find((event) => event.type === "WorkflowStarted")?.metadata
  })

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
  it.effect(
    "an execution started within a tenant acts for it in every run, on any node, and so do its children",
    () =>
      Effect.gen(function* () {
        const Go = DurableDeferred.make("Go")
        const seen: Array<string> = []
        const record = (step: string) =>
          Activity.make({
            name: step,
            execute: Effect.map(Tenant.current, (tenant) => void seen.push(`${step}:${tenant ?? "none"}`))
          })
        const Child = Workflow.make({
          name: "TenantChild",
          payload: { id: Schema.String },
          idempotencyKey: (payload) => payload.id
        })
        const Parent = Workflow.make({
          name: "TenantParent",
          payload: { id: Schema.String },
          idempotencyKey: (payload) => payload.id
        })
        const ChildLive = Child.toLayer(() =>
          Activity.make({
            name: "child",
            execute: Effect.gen(function* () {
              const tenant = yield* Tenant.current
              seen.push(`child:${tenant ?? "none"}`)
              yield* DurableEngine.emit({
                type: "ChildNoted",
                data: { tenant: tenant ?? null },
                stream: "tenant-notes"
              })
            })
          })
        )
        const ParentLive = Parent.toLayer((payload) =>
          Effect.gen(function* () {
            yield* record("before")
            yield* DurableDeferred.await(Go)
            yield* record("after")
            yield* Child.execute({ id: `${payload.id}/child` })
          })
        )
        const workflows = Layer.merge(ChildLive, ParentLive)
        const payload = { id: unique() }
        const first = yield* startNode(workflows)
        const parentId = yield* Parent.execute(payload, { discard: true }).pipe(
          Tenant.within("cafe-sol"),
          provideNode(first.context)
        )
        yield* awaitStatus(parentId, "suspended")
        yield* first.stop
        // Resumed on another node, by a caller that names no tenant.
        const second = yield* startNode(workflows)
        yield* DurableDeferred.done(Go, {
          token: DurableDeferred.tokenFromExecutionId(Go, { workflow: Parent, executionId: parentId }),
          exit: Effect.void as never
        }).pipe(provideNode(second.context))
        yield* awaitStatus(parentId, "succeeded")
        expect(seen).toEqual(["before:cafe-sol", "after:cafe-sol", "child:cafe-sol"])
        expect((yield* startedMetadata(parentId))?.["tenant"]).toBe("cafe-sol")
        const childId = yield* Child.executionId({ id: `${payload.id}/child` })
        expect((yield* startedMetadata(childId))?.["tenant"]).toBe("cafe-sol")
        // What its activities emit says whose it is too.
        const notes = yield* Effect.flatMap(EventStore.EventStore, (store) =>
          store.readStream("tenant-notes")
        )
        expect(notes.at(-1)?.metadata["tenant"]).toBe("cafe-sol")
        // The queue rows name the tenant too (what a scoped listing and fair shares read).
        const queue = yield* ExecutionQueue.ExecutionQueue
        const tenantOf = (executionId: string) =>
          Effect.map(Effect.orDie(queue.get(executionId)), (info) => Option.getOrUndefined(info)?.tenant)
        expect(yield* tenantOf(parentId)).toBe("cafe-sol")
        expect(yield* tenantOf(childId)).toBe("cafe-sol")
        yield* second.stop
      })
  )

  it.effect("an execution started without a tenant has none, and its metadata names none", () =>
    Effect.gen(function* () {
      const seen: Array<string | undefined> = []
      const Plain = Workflow.make({
        name: "TenantPlain",
        payload: { id: Schema.String },
        idempotencyKey: (payload) => payload.id
      })
      const PlainLive = Plain.toLayer(() =>
        Activity.make({
          name: "Look",
          execute: Effect.map(Tenant.current, (tenant) => void seen.push(tenant))
        })
      )
      const node = yield* startNode(PlainLive)
      const payload = { id: unique() }
      yield* Plain.execute(payload).pipe(provideNode(node.context))
      expect(seen).toEqual([undefined])
      const executionId = yield* Plain.executionId(payload)
      expect(Object.keys((yield* startedMetadata(executionId)) ?? {})).not.toContain("tenant")
      yield* node.stop
    })
  )

  it.effect("a tenant that is not an id is refused at the start, nothing stored", () =>
    Effect.gen(function* () {
      const Plain = Workflow.make({
        name: "TenantRefused",
        payload: { id: Schema.String },
        idempotencyKey: (payload) => payload.id
      })
      const node = yield* startNode(Plain.toLayer(() => Effect.void))
      const payload = { id: unique() }
      const exit = yield* Plain.execute(payload).pipe(
        Tenant.within("no spaces/allowed"),
        provideNode(node.context),
        Effect.exit
      )
      expect(exit._tag).toBe("Failure")
      const executionId = yield* Plain.executionId(payload)
      expect(yield* startedMetadata(executionId)).toBeUndefined()
      yield* node.stop
    })
  )

  it.effect(
    "with tenantConcurrency 2, a flood of 20 executions of tenant A does not keep tenant B's execution waiting: B runs while A's are still queued",
    () =>
      Effect.gen(function* () {
        // A's executions hold their place, running, until the latch opens; B's finishes at once.
        const latch = yield* Deferred.make<void>()
        const Flood = Workflow.make({
          name: "TenantFlood",
          payload: { id: Schema.String, hold: Schema.Boolean },
          idempotencyKey: (payload) => payload.id
        })
        const FloodLive = Flood.toLayer((payload) =>
          payload.hold ? Activity.make({ name: "Hold", execute: Deferred.await(latch) }) : Effect.void
        )
        // Enqueued by an engine of another process (no worker here): every one waits for a claim.
        const starter = yield* manualEngine(FloodLive)
        const start = (tenant: string, hold: boolean) =>
          Flood.execute({ id: unique(), hold }, { discard: true }).pipe(
            Tenant.within(tenant),
            Effect.provide(starter)
          )
        const [a, b] = [`a-${unique()}`, `b-${unique()}`]
        const flood = yield* Effect.forEach(Array.from({ length: 20 }), () => start(a, true))
        const late = yield* start(b, false)
        const node = yield* startNode(FloodLive, { concurrency: 4, tenantConcurrency: 2 })
        const info = yield* awaitStatus(late, "succeeded")
        expect(info.tenant).toBe(b)
        const queue = yield* ExecutionQueue.ExecutionQueue
        const ofA = yield* Effect.orDie(queue.list({ tenants: [a] }))
        expect(ofA).toHaveLength(20)
        expect(ofA.filter((e) => e.status === "running")).toHaveLength(2)
        expect(ofA.filter((e) => e.status === "pending")).toHaveLength(18)
        // Started here, by a node whose worker has free slots: A at its limit is not run
        // at once either (start leased respects the share), B's is.
        const local = (tenant: string, hold: boolean) =>
          Flood.execute({ id: unique(), hold }, { discard: true }).pipe(
            Tenant.within(tenant),
            provideNode(node.context)
          )
        const moreOfA = yield* local(a, true)
        expect((yield* awaitStatus(moreOfA, "pending")).leaseOwner).toBeNull()
        yield* awaitStatus(yield* local(b, false), "succeeded")
        // The latch opens: every one of A's runs, two at a time, and finishes.
        yield* Deferred.succeed(latch, undefined)
        for (const executionId of [...flood, moreOfA]) yield* awaitStatus(executionId, "succeeded")
        yield* node.stop
      }).pipe(Effect.scoped)
  )
}
