import { ExecutionQueue } from "@tillflow/engine"
import { queueContract } from "@tillflow/engine/testing"

queueContract("memory", ExecutionQueue.layerMemory)
