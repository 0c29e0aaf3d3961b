"""What a filing's cover states: its fields (symbol, incorporation, auditor, fiscal year
end, ...) and, on a printed cover, its share counts."""
