/**
 * A commerce backend's payment routes on @tillflow/node. Configured by the environment as
 * the tillflow worker is (DATABASE_URL, TERMINAL_CLOUD_*, …); with nothing set it runs on
 * the embedded store and the built-in simulator. PORT (default 3000) is the port it
 * listens on, at 127.0.0.1; POST /sales sells, POST /refunds refunds a sale on its terminal;
 * terminals post their results to /callbacks/<attemptId>.
 */
// #region promise-example
import express from "express"
import { createTillflow, InvalidRequest, TillflowError } from "@tillflow/node"

const port = Number(process.env["PORT"] ?? 3000)
const tf = await createTillflow({ callbacks: { baseUrl: `http://127.0.0.1:${port}/callbacks` } })

const app = express()
app.post("/callbacks/:attemptId", tf.callbackHandler) // before any body parser
app.post("/sales", express.json(), async (req, res) => {
  const { amount, currency, serialNumber } = req.body as Record<string, string | undefined>
  try {
    const terminal = serialNumber ?? (await tf.devices())[0]?.serialNumber ?? ""
    const sale = await tf.sale(
      { serialNumber: terminal, amount: { amount: amount ?? "", currency: currency ?? "" } },
      { idempotencyKey: req.get("Idempotency-Key") }
    )
    res.json(sale)
  } catch (error) {
    if (!(error instanceof TillflowError)) throw error
    res.status(error instanceof InvalidRequest ? 400 : 502).json(error)
  }
})
// A refund on the terminal, linked to its sale by the sale's guid (`efttransactionID`).
app.post("/refunds", express.json(), async (req, res) => {
  const { originalTransactionId, amount, currency, serialNumber } = req.body as Record<
    string,
    string | undefined
  >
  try {
    const terminal = serialNumber ?? (await tf.devices())[0]?.serialNumber ?? ""
    const refund = await tf.refund(
      {
        serialNumber: terminal,
        originalTransactionId,
        amount: { amount: amount ?? "", currency: currency ?? "" }
      },
      { idempotencyKey: req.get("Idempotency-Key") }
    )
    res.json(refund)
  } catch (error) {
    if (!(error instanceof TillflowError)) throw error
    res.status(error instanceof InvalidRequest ? 400 : 502).json(error)
  }
})
const server = app.listen(port, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${port}`))
process.once("SIGTERM", () => server.close(() => void tf.close()))
// #endregion
