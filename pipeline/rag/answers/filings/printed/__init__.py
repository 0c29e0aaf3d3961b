"""Facts read from a filing's printed statements and tables, for a filing with no tagged
ones (a PDF): cells with their scale, rows by their labels, statements of equity, and the
self-checks that tell a statement was read wrong."""
