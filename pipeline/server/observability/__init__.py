"""What the server records about the requests it serves: request ids and the access log
(`access_log`), Prometheus metrics (`metrics`), OpenTelemetry spans (`tracing`), and the
hash-chained audit log (`audit`) with what each of its records holds (`audit_trail`)."""
