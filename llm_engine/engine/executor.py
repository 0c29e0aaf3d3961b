"""Runs the model for the engine: in this process, or split over tensor-parallel processes.

The engine schedules once per step and hands the SchedulerOutput to its executor. The
single-process executor passes it to its ModelRunner. The multiprocess executor is rank 0
(the driver) of a tensor-parallel group: it starts one worker process per other rank,
pickles each step's StepInput once and sends it down every worker's pipe, then runs its
own shard of the same step; the workers' collectives meet the driver's inside the forward
pass, and only the driver samples.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import pickle
import weakref
from multiprocessing.connection import wait
from pathlib import Path

import torch

from llm_engine.config import EngineConfig, ModelConfig
from llm_engine.distributed.parallel_state import (
    backend_for,
    check_no_group,
    destroy_tensor_parallel,
    free_tcp_address,
    init_tensor_parallel,
)
from llm_engine.distributed.worker import WorkerArgs, WorkerDiedError, WorkerHandle
from llm_engine.engine.model_runner import ModelRunner
from llm_engine.engine.scheduler import SchedulerOutput
from llm_engine.engine.step_input import StepInput
from llm_engine.engine.swap_space import HostAllocator
from llm_engine.layers.sampler import SampleResult
from llm_engine.models.llama import check_tensor_parallel
from llm_engine.sequence import Sequence
from llm_engine.structured_output import StructuredOutputManager

logger = logging.getLogger(__name__)

# A spawned worker imports torch and the engine before it reports; allow a loaded machine.
_STARTUP_TIMEOUT_S = 300.0
_STOP_TIMEOUT_S = 5.0


class Executor:
    """The single-process executor; the base of the multiprocess one."""

    driver: ModelRunner

    def __init__(self, config: EngineConfig, model_config: ModelConfig, model_dir: Path,
                 eos_token_ids: set[int], host_allocator: HostAllocator | None = None) -> None:
        self.driver = ModelRunner(config, model_config, model_dir, eos_token_ids,
                                  host_allocator=host_allocator)

    @property
    def num_blocks(self) -> int:
        return self.driver.num_blocks

    @property
    def num_host_blocks(self) -> int:
        """Swap-space blocks; every rank has as many, each holding its shard."""
        return self.driver.swap_space.num_blocks

    def kv_bytes_per_block(self) -> int:
        return self.driver.kv_bytes_per_block()

    def execute(self, sched: SchedulerOutput) -> dict[Sequence, list[SampleResult]]:
        return self.driver.execute(sched)

    def set_structured_outputs(self, manager: StructuredOutputManager) -> None:
        """Hand the grammar compiler to the sampler, which runs on the driver only."""
        self.driver.set_structured_outputs(manager)

    def shutdown(self) -> None:
        """Release what the executor started (nothing here)."""


class MultiprocExecutor(Executor):
    """Rank 0 of a tensor-parallel group, with a worker process for every other rank."""

    def __init__(self, config: EngineConfig, model_config: ModelConfig, model_dir: Path,
                 eos_token_ids: set[int], host_allocator: HostAllocator | None = None) -> None:
        size = config.tensor_parallel_size
        check_tensor_parallel(model_config, size)
        check_no_group()
        base = config.torch_device
        if base.type == "cuda":
            first = base.index or 0
            if torch.cuda.device_count() < first + size:
                raise ValueError(
                    f"tensor_parallel_size={size} needs {size} CUDA devices from cuda:{first} on, "
                    f"but {torch.cuda.device_count()} are visible: lower tensor_parallel_size")
        # The ranks share the CPU cores: each takes its part, so none waits on another.
        threads = max(1, torch.get_num_threads() // size)
        self._state = _GroupState(torch.get_num_threads())
        self._finalizer = weakref.finalize(self, self._state.stop)
        ctx = mp.get_context("spawn")
        init_method = free_tcp_address()
        try:
            for rank in range(1, size):
                args = WorkerArgs(rank, size, init_method, threads, config, model_config,
                                  model_dir, eos_token_ids)
                self._state.workers.append(WorkerHandle(ctx, args))
            for worker in self.workers:
                worker.wait_for("started", _STARTUP_TIMEOUT_S)
            tp = init_tensor_parallel(0, size, init_method, base)
            self._state.owns_group = True
            torch.set_num_threads(threads)
            # The workers' swap space comes from their own processes' default allocator.
            self.driver = ModelRunner(config, model_config, model_dir, eos_token_ids, tp,
                                      host_allocator)
            for worker in self.workers:
                worker.wait_for("ready")
        except BaseException as exc:
            dead = None if isinstance(exc, ValueError | WorkerDiedError) else self._dead_worker()
            self.shutdown()
            if dead is not None:
                raise dead.died() from exc
            raise
        logger.info("tensor parallelism: %d ranks over %s, %d threads each", size,
                    backend_for(base), threads)

    @property
    def workers(self) -> list[WorkerHandle]:
        return self._state.workers

    def execute(self, sched: SchedulerOutput) -> dict[Sequence, list[SampleResult]]:
        step, sample_seqs, prompt_spans = StepInput.from_scheduler_output(sched,
                                                                          self.driver.block_size)
        payload = pickle.dumps(step, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            for worker in self.workers:
                worker.send(payload)
            return self.driver.execute_step(step, sample_seqs, prompt_spans)
        except WorkerDiedError:
            raise
        except RuntimeError as exc:  # a collective failed: say which peer went away
            dead = self._dead_worker()
            if dead is None:
                raise
            raise dead.died() from exc

    def shutdown(self) -> None:
        """Stop the workers and leave the process group (idempotent; also runs on garbage
        collection and at interpreter exit)."""
        self._finalizer()

    def _dead_worker(self, timeout: float = 2.0) -> WorkerHandle | None:
        """A worker that has exited, waiting a moment for one whose exit is under way."""
        by_sentinel = {w.process.sentinel: w for w in self.workers}
        gone = wait(list(by_sentinel), timeout) if by_sentinel else []
        return by_sentinel[gone[0]] if gone else None


class _GroupState:
    """What the multiprocess executor must release, kept apart from it so that its
    finalizer holds no reference to the executor."""

    def __init__(self, num_threads: int) -> None:
        self.workers: list[WorkerHandle] = []
        self.owns_group = False
        self.num_threads = num_threads

    def stop(self) -> None:
        for worker in self.workers:
            worker.request_stop()
        # Leaving the group first fails any collective a worker still waits in (after an
        # error on the driver), so that it exits instead of waiting out the timeout.
        if self.owns_group:
            destroy_tensor_parallel()
            self.owns_group = False
        for worker in self.workers:
            worker.join(_STOP_TIMEOUT_S)
        torch.set_num_threads(self.num_threads)


def create_executor(config: EngineConfig, model_config: ModelConfig, model_dir: Path,
                    eos_token_ids: set[int], host_allocator: HostAllocator | None = None
                    ) -> Executor:
    cls = MultiprocExecutor if config.tensor_parallel_size > 1 else Executor
    return cls(config, model_config, model_dir, eos_token_ids, host_allocator)
