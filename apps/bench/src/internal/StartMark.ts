/**
 * Imported first by the cold-start processes: marks when module evaluation began (after
 * Node's and tsx's own bootstrap), so a start can be split into loading and running.
 */
import { performance } from "node:perf_hooks"

/** Milliseconds since the process started, when this module was evaluated. */
export const evaluatedAt: number = performance.now()
