import { ExecutionQueue, MemoryEventStore } from "@tillflow/engine"
import * as Layer from "effect/Layer"
import { engineContract } from "@tillflow/engine/testing"

engineContract("the memory stores", Layer.merge(MemoryEventStore.layer(), ExecutionQueue.layerMemory))
