"""Prompt-lookup (n-gram) speculative decoding: drafts copied from the context, verified in
one forward pass."""
