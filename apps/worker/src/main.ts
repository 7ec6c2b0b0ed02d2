/**
 * The standalone worker. Not built yet: the engine, the workflows and the intake API come
 * with issues 6, 7 and 9. Until then `npm start` says so honestly and exits non-zero.
 */
process.stderr.write(
  "tillflow worker: not built yet. The typed model, simulator, event store and transport are being built first (see README).\n"
)
process.exitCode = 1
