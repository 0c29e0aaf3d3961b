"""A tensor-parallel rank other than the driver: its process, and the driver's handle on it.

The worker builds its ModelRunner (its shard of the weights and KV cache), then loops:
receive the step the driver pickled, run it, repeat, until it receives None or the driver
goes away. Messages back to the driver go over the same pipe: "started" once the process
is up, "ready" once its runner is built, and the traceback of any
error just before it exits.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

import torch

from llm_engine.config import EngineConfig, ModelConfig
from llm_engine.distributed.parallel_state import destroy_tensor_parallel, init_tensor_parallel
from llm_engine.engine.model_runner import ModelRunner

# A traceback longer than this is cut from the front: the pipe must not block on it.
_MAX_ERROR_CHARS = 8000


class WorkerDiedError(RuntimeError):
    """A tensor-parallel worker process exited; the engine cannot take another step."""


@dataclass(frozen=True)
class WorkerArgs:
    rank: int
    tp_size: int
    init_method: str
    num_threads: int
    config: EngineConfig
    model_config: ModelConfig
    model_dir: Path
    eos_token_ids: set[int]


def worker_main(args: WorkerArgs, conn: Connection) -> None:
    """The body of a worker process."""
    try:
        torch.set_num_threads(args.num_threads)
        conn.send(("started", None))
        tp = init_tensor_parallel(args.rank, args.tp_size, args.init_method,
                                  args.config.torch_device)
        runner = ModelRunner(args.config, args.model_config, args.model_dir, args.eos_token_ids, tp)
        conn.send(("ready", None))
        while (step := pickle.loads(conn.recv_bytes())) is not None:
            runner.execute_step(step)
    except (EOFError, BrokenPipeError):
        return  # the driver is gone: nobody is left to serve
    except BaseException:
        try:
            conn.send(("error", traceback.format_exc()[-_MAX_ERROR_CHARS:]))
        except OSError:
            pass
        raise SystemExit(1) from None
    finally:
        destroy_tensor_parallel()


class WorkerHandle:
    """The driver's side of one worker: its process and its pipe."""

    def __init__(self, ctx: Any, args: WorkerArgs) -> None:
        self.rank = args.rank
        self.conn, child = ctx.Pipe()
        self.process: mp.process.BaseProcess = ctx.Process(
            target=worker_main, args=(args, child), name=f"llm-tp-worker-{args.rank}", daemon=True)
        self.process.start()
        child.close()
        self.error: str | None = None

    def wait_for(self, expected: str, timeout: float | None = None) -> Any:
        """The payload of the next message, which must be `expected`; raises when the
        worker dies first or reports an error."""
        ready = wait([self.conn, self.process.sentinel], timeout)
        if not ready:
            raise WorkerDiedError(f"tensor-parallel worker rank {self.rank} did not report "
                                  f"{expected!r} within {timeout} s")
        if self.conn in ready:
            try:
                kind, payload = self.conn.recv()
            except EOFError:
                raise self.died() from None
            if kind == expected:
                return payload
            if kind == "error":
                self.error = payload
        raise self.died()

    def send(self, payload: bytes) -> None:
        if not self.process.is_alive():
            raise self.died()
        try:
            self.conn.send_bytes(payload)
        except (BrokenPipeError, ConnectionResetError):
            raise self.died() from None

    def died(self) -> WorkerDiedError:
        """The error that says this worker is gone, with its traceback when it sent one."""
        self.process.join(timeout=5)
        if self.error is None and self.conn.poll():
            try:
                kind, payload = self.conn.recv()
                if kind == "error":
                    self.error = payload
            except (EOFError, OSError):
                pass
        detail = f":\n{self.error}" if self.error else ""
        return WorkerDiedError(f"tensor-parallel worker rank {self.rank} exited "
                               f"(exit code {self.process.exitcode}){detail}")

    def request_stop(self) -> None:
        """Ask the worker to leave its loop (it may be busy; see `join`)."""
        if self.process.is_alive():
            try:
                self.conn.send_bytes(pickle.dumps(None))
            except OSError:
                pass

    def join(self, timeout: float) -> None:
        """Wait for the worker to exit, and kill it if it has not within `timeout` seconds."""
        self.process.join(timeout)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout)
        self.conn.close()
