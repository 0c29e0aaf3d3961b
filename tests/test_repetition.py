"""The repeated n-gram stop of the answers (pipeline.rag.repetition), on plain strings."""

from __future__ import annotations

import pytest

from pipeline.rag.repetition import RepeatGuard


def feed_growing(text: str, n: int) -> tuple[RepeatGuard, list[int]]:
    """Feed `text` a character at a time, as a stream grows; the settled lengths."""
    guard = RepeatGuard(n)
    settled = []
    for end in range(1, len(text) + 1):
        settled.append(guard.feed(text[:end], final=end == len(text)))
        if guard.cut is not None:
            break
    return guard, settled


def test_a_loop_is_cut_before_it_starts_over() -> None:
    guard, _ = feed_growing("Revenue in 2019: 2019: 2019: 2019: 2019: 2019: 2019:", 4)
    assert guard.cut is not None
    text = "Revenue in 2019: 2019: 2019: 2019: 2019: 2019: 2019:"[:guard.cut]
    assert text == "Revenue in 2019:"  # the loop starts at the second "2019:"


def test_a_repeated_clause_is_cut_at_its_second_start() -> None:
    text = ("The revenue was $5.2 million in 2019. The revenue was $5.2 million in 2019. "
            "The revenue")
    guard, _ = feed_growing(text, 4)
    assert text[:guard.cut] == "The revenue was $5.2 million in 2019."


def test_an_answer_without_a_repeat_is_kept_whole_and_settles_in_order() -> None:
    text = "The total sales in 2019 were $1,496.5 million, up from $1,202.9 million in 2018."
    guard, settled = feed_growing(text, 4)
    assert guard.cut is None and settled[-1] == len(text)
    assert settled == sorted(settled)
    # While it streams, the last words are held back: never a word cut in half.
    assert all(s == 0 or text[s - 1] == " " for s in settled[:-1])
    assert max(settled[:-1]) < len(text) - len("million in 2018.")


def test_case_and_spacing_do_not_hide_a_repeat() -> None:
    guard = RepeatGuard(3)
    guard.feed("It was  Fixed Price and fixed price and more", final=True)
    assert guard.cut == len("It was  Fixed Price and")


@pytest.mark.parametrize("n", [0, 1, -2])
def test_n_below_two_is_refused(n) -> None:
    with pytest.raises(ValueError, match="n >= 2"):
        RepeatGuard(n)
