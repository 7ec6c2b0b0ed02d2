/**
 * One or two examples per command, shown at the end of its `--help` (`Help`), by the
 * command's path. Serials and guids are the built-in simulator's kind (`tillflow devices`
 * lists the real ones); a test checks that every command has an entry.
 */

const guid = "578ad974-5fa2-1705-bffc-0bb60949358e"
const serial = "0404090209"

/** Examples by command path (`""` is `tillflow` itself). */
export const examples: Readonly<Record<string, ReadonlyArray<string>>> = {
  "": ["tillflow devices", `tillflow sale --serial ${serial} --amount 10.50`],
  devices: ["tillflow devices", "tillflow devices --json --worker http://127.0.0.1:7080"],
  sale: [
    `tillflow sale --serial ${serial} --amount 10.50`,
    `tillflow sale -s ${serial} -a 1500 -c JPY --customer-reference order-42 --json`
  ],
  refund: [
    `tillflow refund --serial ${serial} --amount 5.00 --original-transaction-id ${guid}`,
    `tillflow refund --serial ${serial} --amount 5.00   # unlinked`
  ],
  reverse: [
    `tillflow reverse --original-transaction-id ${guid}   # terminal-less, in full`,
    `tillflow reverse --serial ${serial} --original-transaction-id ${guid} --amount 10.50`
  ],
  tokenize: [`tillflow tokenize --serial ${serial}`],
  print: [`tillflow print --serial ${serial} "<p>Thank you</p>"`],
  ping: [`tillflow ping --serial ${serial}`, `tillflow ping --serial ${serial} --device-info`],
  "card-pan": [`tillflow card-pan --serial ${serial}`],
  stop: [
    `tillflow stop --serial ${serial}`,
    `tillflow stop --serial ${serial} --of 6a0ea39282599f7cbba0680372c3fe3e --reason "the customer left"`
  ],
  preauth: [`tillflow preauth open --serial ${serial} --amount 100.00`],
  "preauth open": [`tillflow preauth open --serial ${serial} --amount 100.00`],
  "preauth increase": [
    `tillflow preauth increase --original-transaction-id ${guid} --amount 20.00`,
    `tillflow preauth increase --original-transaction-id ${guid} --amount 20.00 --tip 2.00`
  ],
  "preauth capture": [
    `tillflow preauth capture --original-transaction-id ${guid} --amount 95.00`,
    `tillflow preauth capture --original-transaction-id ${guid} --amount 95.00 --tip 5.00`
  ],
  "preauth reverse": [`tillflow preauth reverse --original-transaction-id ${guid}`],
  moto: [`tillflow moto sale --serial ${serial} --amount 25.00`],
  "moto sale": [
    `tillflow moto sale --serial ${serial} --amount 25.00`,
    "tillflow moto sale --card-token TOKEN --amount 25.00 --billing-zip-code 28001"
  ],
  "moto refund": [`tillflow moto refund --original-transaction-id ${guid} --amount 5.00`],
  "moto reverse": [`tillflow moto reverse --original-transaction-id ${guid}`],
  "moto preauth": [`tillflow moto preauth --serial ${serial} --amount 80.00`],
  "tip-adjust": [`tillflow tip-adjust --original-transaction-id ${guid} --tip 2.50`],
  token: [`tillflow token --original-transaction-id ${guid}`],
  batch: [`tillflow batch detail --serial ${serial} --batch 1`],
  "batch close": [`tillflow batch close --serial ${serial} --batch 1`],
  "batch summary": [`tillflow batch summary --serial ${serial} --batch 1`],
  "batch detail": [`tillflow batch detail --serial ${serial} --batch 1 --json`],
  device: [
    `tillflow device set-screen-brightness --serial ${serial} --min 10 --max 90`,
    `tillflow device reboot --serial ${serial} --force`
  ],
  status: ["tillflow status 96674397-90c8-4b37-9837-f14bdf3e57e1 --selector all"],
  transactions: [
    `tillflow transactions resolve ${guid} --request terminal-5f1c0e3a --not-applied --reason "no capture on the acquirer's report" --operator alice`
  ],
  "transactions act": [
    `tillflow transactions act ${guid} --action refund --amount 15.00 --currency EUR --reason "customer returned the item" --operator alice`,
    `tillflow transactions act ${guid} --action reverse --reason "sold twice by mistake" --yes --json`
  ],
  attempts: [
    `tillflow attempts resolve --batch PAX-A920-0042 --request close-7 --not-applied --reason "no close on the acquirer's report" --operator alice`
  ],
  "attempts resolve": [
    `tillflow attempts resolve --moto-sale 6c1f7a0e-2b4d-4e8a-9f3c-1d2e3f4a5b6c --request sale-7 --applied --guid ${guid} --reason "on the acquirer's report" --operator alice --json`,
    `tillflow attempts resolve --terminal 6a0ea39282599f7cbba0680372c3fe3e --request 6a0ea39282599f7cbba0680372c3fe3e --applied --guid ${guid} --amount 27.00 --currency EUR --reason "the terminal's journal shows it approved with a tip" --operator alice`
  ],
  "transactions resolve": [
    `tillflow transactions resolve ${guid} --request terminal-5f1c0e3a --not-applied --reason "no capture on the acquirer's report" --operator alice`,
    `tillflow transactions resolve ${guid} --request tip-7 --applied --reason "the receipt shows the tip" --operator bob --status-endpoint "SALE AUTHORISED" --json`
  ],
  alerts: [
    "tillflow alerts list",
    'tillflow alerts ack mismatch.3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f.7 --reason "calling the acquirer"'
  ],
  "alerts list": ["tillflow alerts list", "tillflow alerts list --state all --json"],
  "alerts ack": [
    'tillflow alerts ack mismatch.3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f.7 --reason "calling the acquirer"'
  ],
  "alerts resolve": [
    'tillflow alerts resolve mismatch.3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f.7 --reason "the acquirer confirms the decline"'
  ],
  executions: ["tillflow executions list --status suspended"],
  "executions list": [
    `tillflow executions list --serial ${serial} --limit 5 --json`,
    "tillflow executions list --outcome declined --merchant cafe-sol --amount 10.50 --currency EUR --from 2026-11-28"
  ],
  merchants: ["tillflow merchants list"],
  "merchants add": [
    'tillflow merchants add cafe-sol --name "Café Sol" --mcc 5812 --virtual-terminal V-100',
    'tillflow merchants add tea-house --name "Tea House" --mcc 5814 --partial-reversal yes --rate-limit 20/s'
  ],
  "merchants acquirer": [
    "tillflow merchants acquirer cafe-sol --partial-reversal yes",
    "tillflow merchants acquirer cafe-sol --capture-reversal no --partial-reversal default"
  ],
  "merchants rate-limit": [
    "tillflow merchants rate-limit cafe-sol 600/min --rate-burst 30",
    "tillflow merchants rate-limit cafe-sol default"
  ],
  "merchants list": ["tillflow merchants list", "tillflow merchants list --json"],
  "merchants disable": ["tillflow merchants disable cafe-sol"],
  "merchants enable": ["tillflow merchants enable cafe-sol"],
  "merchants add-key": [
    "TILLFLOW_MERCHANT_KEY=… tillflow merchants add-key cafe-sol",
    "tillflow merchants add-key cafe-sol --kind partner   # typed without echo"
  ],
  "merchants retire-key": ["tillflow merchants retire-key cafe-sol key-3f2b8c1e"],
  "merchants rewrap-keys": ["TILLFLOW_KEK_PREVIOUS=kek-1:… tillflow merchants rewrap-keys"],
  "executions retry": [
    `tillflow executions retry 6a0ea39282599f7cbba0680372c3fe3e --reason "the terminal is back online" --yes`
  ],
  "executions show": ["tillflow executions show 3fbcbde8de67f89cfde611dfd05bbad3 --history"],
  events: ["tillflow events tail -f"],
  "events tail": ["tillflow events tail --last 50", "tillflow events tail -f --json | jq .type"],
  audit: ["tillflow audit verify"],
  "audit ledger": [
    "tillflow audit ledger --by day,terminal",
    "tillflow audit ledger --format csv --out ledger.csv"
  ],
  "audit verify": ["tillflow audit verify"],
  "audit rebuild": ["tillflow audit rebuild"],
  "audit timeline": ["tillflow audit timeline 3fbcbde8de67f89cfde611dfd05bbad3"],
  archive: ["tillflow archive run --dry-run"],
  "archive run": ["tillflow archive run --dry-run", "TILLFLOW_RETENTION_HOT_DAYS=30 tillflow archive run"],
  "archive erase-personal": [
    "tillflow archive erase-personal --days 180",
    "tillflow archive erase-personal --field cardHolderName --days 30"
  ],
  replay: ["tillflow replay --export histories.jsonl", "tillflow replay --from histories.jsonl --json"],
  simulator: ["tillflow simulator --port 7070 --terminals 5"],
  operators: ["tillflow operators hash < ana-secret.txt"],
  "operators hash": ["tillflow operators hash < ana-secret.txt", "tillflow operators hash"],
  login: [
    "tillflow login --worker http://127.0.0.1:7080 --operator ana   # asks for the secret",
    "TILLFLOW_OPERATOR_SECRET=… tillflow login --worker http://127.0.0.1:7080 --operator ana --print-session"
  ],
  logout: ["tillflow logout --worker http://127.0.0.1:7080"],
  worker: ["TILLFLOW_INTAKE_TOKEN=a-token-of-16-chars tillflow worker"]
}
