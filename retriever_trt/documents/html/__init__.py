"""HTML filings, SEC inline XBRL first: reading order, tables, tagged facts."""
