import { ExecutionQueue, MemoryEventStore } from "@tillflow/core"
import * as Layer from "effect/Layer"
import { engineContract } from "./EngineContract.js"

engineContract("the memory stores", Layer.merge(MemoryEventStore.layer(), ExecutionQueue.layerMemory))
