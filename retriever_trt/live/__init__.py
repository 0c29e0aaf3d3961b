"""Documents added while serving: uploads received, read in a child process, indexed in the
background and published whole; the durable catalog and one segment a document."""
