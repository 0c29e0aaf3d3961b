"""Answers from retrieved tables: rows the question names, their periods, exact arithmetic
with the cells cited (see `pipeline.rag.answers`)."""
