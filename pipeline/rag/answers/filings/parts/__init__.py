"""Parts of a company a question names: segments, regions, product lines and classes of
stock matched against the filing's members, compared with each other, or read from a
printed table's rows and columns."""
