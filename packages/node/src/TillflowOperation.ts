/**
 * An operation in flight, as a call of the Promise API returns it: a promise of its
 * result (await it), the progress of an operation waiting on a terminal as an async
 * iterator (`for await (const p of op.progress)`) and as `"progress"` events, and its
 * execution id as soon as it is started (`await op.executionId`).
 */
import { EventEmitter } from "node:events"

/** Where an operation stands while it runs. */
export interface Progress {
  /** `queued`, `sending`, `waiting-for-result`, `reconciling` … */
  readonly phase: string
  /** The attempt in flight (0 before the first). */
  readonly attempt: number
  /** What it waits for, said for a person. */
  readonly waitingFor: string
  /** The execution's status (`pending`, `running`, `suspended` …). */
  readonly status: string
}

/** Receives the events of an operation. */
export interface OperationEvents {
  /** The operation was started (or joined, for a repeated idempotency key). */
  readonly started: (executionId: string) => void
  /** Its progress changed. */
  readonly progress: (progress: Progress) => void
}

/** How a run reports to its operation. */
export interface Reporter {
  readonly started: (executionId: string) => void
  readonly progress: (progress: Progress) => void
}

/**
 * An operation in flight: a promise of its result with its progress beside.
 *
 * @example
 * const op = tf.sale({ serialNumber, amount: { amount: "10.50", currency: "EUR" } })
 * op.on("progress", (p) => console.log(p.phase, p.waitingFor))
 * for await (const p of op.progress) console.log(p.waitingFor)
 * const result = await op // { outcome: "approved", … }
 */
export class TillflowOperation<A> extends EventEmitter implements PromiseLike<A> {
  /** The execution id, once the operation is started. */
  readonly executionId: Promise<string>
  private readonly result: Promise<A>
  private readonly seen: Array<Progress> = []
  private ended = false
  private readonly waiters = new Set<() => void>()

  /** Runs `run`, which reports its start and progress through the given reporter. */
  constructor(run: (reporter: Reporter) => Promise<A>) {
    super()
    let resolveId: (id: string) => void = () => undefined
    let rejectId: (error: unknown) => void = () => undefined
    this.executionId = new Promise<string>((resolve, reject) => {
      resolveId = resolve
      rejectId = reject
    })
    const reporter: Reporter = {
      started: (id) => {
        resolveId(id)
        this.emit("started", id)
      },
      progress: (progress) => {
        this.seen.push(progress)
        this.emit("progress", progress)
        this.wake()
      }
    }
    this.result = run(reporter).finally(() => {
      this.ended = true
      this.wake()
    })
    this.result.catch(rejectId)
    // Whoever only reads the progress does not leave a rejection unhandled; awaiting the
    // operation still rejects.
    this.executionId.catch(() => undefined)
    this.result.catch(() => undefined)
  }

  private wake(): void {
    for (const waiter of this.waiters) waiter()
    this.waiters.clear()
  }

  /**
   * The progress, from the start, until the operation ends (the iterator then completes;
   * how it ended is the operation's promise). Each iterator sees every change.
   */
  get progress(): AsyncIterable<Progress> {
    return {
      [Symbol.asyncIterator]: () => {
        let next = 0
        return {
          next: async (): Promise<IteratorResult<Progress>> => {
            while (next >= this.seen.length && !this.ended) {
              await new Promise<void>((resolve) => this.waiters.add(resolve))
            }
            const value = this.seen[next]
            if (value === undefined) return { done: true, value: undefined }
            next += 1
            return { done: false, value }
          }
        }
      }
    }
  }

  override on<K extends keyof OperationEvents>(event: K, listener: OperationEvents[K]): this
  override on(event: string | symbol, listener: (value: never) => void): this {
    return super.on(event, listener as (value: unknown) => void)
  }

  /** As `Promise.prototype.then`: an operation is awaited like a promise. */
  then<R1 = A, R2 = never>(
    onfulfilled?: ((value: A) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null
  ): Promise<R1 | R2> {
    return this.result.then(onfulfilled, onrejected)
  }

  /** As `Promise.prototype.catch`. */
  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<A | R> {
    return this.result.catch(onrejected)
  }

  /** As `Promise.prototype.finally`. */
  finally(onfinally?: (() => void) | null): Promise<A> {
    return this.result.finally(onfinally)
  }
}
