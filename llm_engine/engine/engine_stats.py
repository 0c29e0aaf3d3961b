"""`EngineStats`: the engine's counters at one moment (running and waiting requests, KV
blocks, prefix-cache hits, preemptions, swap space, speculative decoding), and how they are
read off the block manager, the scheduler and the spec-decode counters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llm_engine.engine.block_manager import BlockManager
    from llm_engine.engine.scheduler import Scheduler
    from llm_engine.spec_decode.metrics import SpecDecodeStats


@dataclass
class EngineStats:
    num_running: int
    num_waiting: int
    num_swapped: int
    num_blocks: int
    num_free_blocks: int
    kv_cache_usage: float
    prefix_cache_queries: int  # prompt tokens looked up
    prefix_cache_hits: int  # of which found in the cache
    num_preemptions_swap: int
    num_preemptions_recompute: int
    num_host_blocks: int  # the swap space
    num_swapped_blocks: int  # host blocks now holding swapped-out KV
    num_blocks_swapped_out: int  # block copies device -> host, since start
    num_blocks_swapped_in: int  # block copies host -> device
    # Allocated KV slots holding no token / allocated slots, during the last step and
    # during the step that used the most blocks (shared prefix blocks counted once).
    kv_cache_waste: float
    kv_cache_waste_at_peak: float
    peak_num_used_blocks: int
    # Speculative decoding (vLLM's spec_decode counters): verifications, draft tokens
    # verified, and of those accepted.
    spec_decode_num_drafts: int = 0
    spec_decode_num_draft_tokens: int = 0
    spec_decode_num_accepted_tokens: int = 0

    @property
    def spec_decode_acceptance_rate(self) -> float:
        drafted = self.spec_decode_num_draft_tokens
        return self.spec_decode_num_accepted_tokens / drafted if drafted else 0.0

    @property
    def num_used_blocks(self) -> int:
        return self.num_blocks - self.num_free_blocks

    @property
    def num_preemptions(self) -> int:
        return self.num_preemptions_swap + self.num_preemptions_recompute

    @property
    def swap_space_usage(self) -> float:
        return self.num_swapped_blocks / self.num_host_blocks if self.num_host_blocks else 0.0

    @property
    def prefix_cache_hit_rate(self) -> float:
        return self.prefix_cache_hits / self.prefix_cache_queries if self.prefix_cache_queries else 0.0


def collect_stats(bm: BlockManager, sched: Scheduler, spec: SpecDecodeStats) -> EngineStats:
    """The counters as they stand now (`LLMEngine.get_stats`)."""
    return EngineStats(
        num_running=len(sched.running),
        num_waiting=len(sched.waiting),
        num_swapped=len(sched.swapped),
        num_blocks=bm.num_blocks,
        num_free_blocks=bm.num_free_blocks,
        kv_cache_usage=bm.usage(),
        prefix_cache_queries=bm.prefix_queries,
        prefix_cache_hits=bm.prefix_hits,
        num_preemptions_swap=sched.preemptions["swap"],
        num_preemptions_recompute=sched.preemptions["recompute"],
        num_host_blocks=bm.num_host_blocks,
        num_swapped_blocks=bm.num_host_blocks - bm.num_free_host_blocks,
        num_blocks_swapped_out=bm.blocks_swapped_out,
        num_blocks_swapped_in=bm.blocks_swapped_in,
        kv_cache_waste=sched.kv_waste,
        kv_cache_waste_at_peak=sched.kv_waste_at_peak,
        peak_num_used_blocks=sched.peak_used_blocks,
        spec_decode_num_drafts=spec.num_drafts,
        spec_decode_num_draft_tokens=spec.num_draft_tokens,
        spec_decode_num_accepted_tokens=spec.num_accepted_tokens,
    )
