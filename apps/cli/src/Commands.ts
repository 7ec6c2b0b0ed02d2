/**
 * The `tillflow` root command, assembled from the command groups in `commands/`: one
 * command per terminal operation of the spec, the status endpoint, executions and the
 * event log, the audit, and the simulator and worker as processes. Each command parses
 * its input into a request, hands it to the `Intake` (`Backend` chooses a running worker
 * or this process), follows it with a progress line, prints the answer (human or
 * `--json`) and ends with its exit code (`Handler`, `Output`).
 */
import * as Command from "@effect/cli/Command"
import * as WorkerConfig from "@tillflow/intake/WorkerConfig"
import { alerts } from "./commands/alerts.js"
import { archive } from "./commands/archive.js"
import { attempts } from "./commands/attempts.js"
import { merchants } from "./commands/merchants.js"
import { audit } from "./commands/audit.js"
import { batch } from "./commands/batch.js"
import { device, devices } from "./commands/device.js"
import { events } from "./commands/events.js"
import { executions } from "./commands/executions.js"
import { login, logout } from "./commands/login.js"
import { tipAdjust, token } from "./commands/followUp.js"
import { moto } from "./commands/moto.js"
import { operators } from "./commands/operators.js"
import { preauth } from "./commands/preauth.js"
import { replay } from "./commands/replay.js"
import { simulator } from "./commands/simulator.js"
import { status } from "./commands/status.js"
import { transactions } from "./commands/transactions.js"
import { cardPan, ping, print, refund, reverse, sale, stop, tokenize } from "./commands/terminal.js"
import { worker } from "./commands/worker.js"

export { parseAmount } from "./internal/amount.js"

/** The root command. */
export const tillflow = Command.make("tillflow").pipe(
  Command.withDescription("drive payment terminals through durable workflows, and audit the event log"),
  Command.withSubcommands([
    devices,
    sale,
    refund,
    reverse,
    tokenize,
    print,
    ping,
    cardPan,
    stop,
    preauth,
    moto,
    tipAdjust,
    token,
    batch,
    device,
    status,
    transactions,
    attempts,
    executions,
    events,
    alerts,
    audit,
    archive,
    replay,
    simulator,
    operators,
    merchants,
    login,
    logout,
    worker
  ])
)

/** Installs the configuration provider (environment, then `tillflow.config.json`). */
export const configLayer = WorkerConfig.layerProvider()
