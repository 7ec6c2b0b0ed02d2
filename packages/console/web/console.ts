/** The console's script: the pages by route, started in the frame of `shell.ts`. */
import { alerts } from "./alerts.js"
import { execution, executions } from "./executions.js"
import { ledger, ledgerPage } from "./ledger.js"
import { merchants } from "./merchants.js"
import { terminals } from "./overview.js"
import { type Page, start } from "./shell.js"
import { simulator } from "./simulator.js"

void start((service, session) => {
  const executionPages: Page = (main, route) =>
    route.path.length > 1 ? execution(main, route) : executions(main, route)
  // An operator limited to merchants: its merchant's alerts, terminals, executions (and a
  // simulated sale on its own terminals) and ledger, each answered scoped by the worker; the
  // merchants and the chain's check span every merchant.
  const pages: Record<string, Page> =
    session?.merchants === undefined
      ? { alerts, terminals, executions: executionPages, ledger }
      : { alerts, terminals, executions: executionPages, ledger: ledgerPage({ verify: false }) }
  if (service.kind === "simulator") pages["simulator"] = simulator(service)
  if (session?.role === "admin" && session.merchants === undefined) pages["merchants"] = merchants
  return pages
})
