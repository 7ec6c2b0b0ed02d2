/** Placeholder entry point: this app is not built yet (see the open issues). */
process.stdout.write("not built yet\n")
