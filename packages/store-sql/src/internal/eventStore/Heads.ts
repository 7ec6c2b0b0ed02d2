/**
 * The heads an event store last wrote (or was last told by a wrong guess), so that a
 * writer appending at the version it just wrote (the usual case: one worker per stream)
 * skips reading the head. An entry is only ever a guess: the append function checks both
 * the version and the hash (a head written by a transaction that rolled back may have been
 * rewritten since with another hash), so a stale entry costs one attempt, never a broken
 * chain or a wrong conflict.
 */
import type { HashChain } from "@tillflow/engine"

const headCacheSize = 10_000

/** The cache of one store: the most recently remembered heads, at most `headCacheSize`. */
export interface Heads {
  readonly get: (streamId: string) => HashChain.StreamHead | undefined
  readonly remember: (streamId: string, head: HashChain.StreamHead) => void
  readonly forget: (streamId: string) => void
}

/** An empty cache. */
export const make = (): Heads => {
  const heads = new Map<string, HashChain.StreamHead>()
  return {
    get: (streamId) => heads.get(streamId),
    remember: (streamId, head) => {
      heads.delete(streamId)
      heads.set(streamId, head)
      if (heads.size > headCacheSize) {
        const oldest = heads.keys().next()
        if (oldest.done !== true) heads.delete(oldest.value)
      }
    },
    forget: (streamId) => {
      heads.delete(streamId)
    }
  }
}
