"""TransferQueue for Java, from Python: upstream TransferQueue's Python API over the Java servers.

Quick start::

    import transferqueue_jvm as tq
    tq.init()                      # starts a local controller and storage from the bundled jar
    tq.kv_put("sample_0", "train", {"input_ids": torch.tensor([1, 2, 3])}, tag={"score": 0.9})
    batch = tq.kv_batch_get(["sample_0"], "train")
    tq.close()
"""

from .batch import DENSE, JAGGED, OBJECT
from .client import Deployment, TransferQueueClient
from .dataloader import StreamingDataLoader, StreamingDataset, mark_producer_done
from .errors import *  # noqa: F401,F403 - one class per error code
from .errors import ErrorCode, TQError
from .interface import (async_kv_batch_get, async_kv_batch_get_by_meta, async_kv_batch_put, async_kv_clear,
                        async_kv_list, async_kv_put, close, get_client, get_metrics_endpoint, init,
                        kv_batch_get, kv_batch_get_by_meta, kv_batch_put, kv_clear, kv_list, kv_put,
                        async_load_checkpoint, async_save_checkpoint, load_checkpoint, save_checkpoint)
from .metadata import UNKNOWN_GENERATION, BatchMeta, KVBatchMeta
from .values import OpaqueValue

__version__ = "0.1.0"
