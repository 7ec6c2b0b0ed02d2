import { ExecutionQueue } from "@tillflow/core"
import { queueContract } from "./QueueContract.js"

queueContract("memory", ExecutionQueue.layerMemory)
