"""Office and spreadsheet files: .xlsx, .docx and .csv loaders, their cell values, and the zip
check before a library unpacks one."""
