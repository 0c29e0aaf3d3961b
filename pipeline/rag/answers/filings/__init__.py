"""Answers from filings: scope, facts (tagged or read from printed statements), qualifiers,
measures by the filing's own labels, several companies, the cover (see `pipeline.rag.answers`)."""
