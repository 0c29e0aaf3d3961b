"""What stands between a request and the pipeline: body limit, access (API key, CORS),
admission (queue bounds), request limits (the model's bounds) and client disconnects."""
