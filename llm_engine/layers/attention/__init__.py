"""Attention: the paged-attention layer (`attention`: K/V written into cache blocks and
attended through each sequence's block table, with its metadata) and the kernels behind its
decode and prefill hooks: the CPU decode kernel (`paged_attention_cpu`), its CUDA twin in
Triton (`paged_attention_triton`, imported only where that backend is chosen), and the CPU
prefill kernels in fp32 and bf16 (`prefill_attention_cpu`, `prefill_attention_bf16_cpu`).
Which of them runs is chosen once at start by layers/selector.py."""
