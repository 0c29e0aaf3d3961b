"""What analysts call statement lines and metrics: the line-item vocabulary, metrics by
definition, and the formulas a question defines (see `pipeline.rag.answers`)."""
