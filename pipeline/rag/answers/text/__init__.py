"""Answers cut from retrieved text: the sentence that holds the question's words, and the
span it asks for (see `pipeline.rag.answers`)."""
