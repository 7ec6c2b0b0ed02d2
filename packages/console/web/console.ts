/** The console's script: the pages by route, started in the frame of `shell.ts`. */
import { alerts } from "./alerts.js"
import { execution, executions } from "./executions.js"
import { ledger } from "./ledger.js"
import { merchants } from "./merchants.js"
import { terminals } from "./overview.js"
import { type Page, start } from "./shell.js"
import { simulator } from "./simulator.js"

void start((service, role) => {
  const pages: Record<string, Page> = {
    alerts,
    terminals,
    executions: (main, route) => (route.path.length > 1 ? execution(main, route) : executions(main, route)),
    ledger
  }
  if (service.kind === "simulator") pages["simulator"] = simulator(service)
  if (role === "admin") pages["merchants"] = merchants
  return pages
})
