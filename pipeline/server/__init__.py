"""The HTTP edge: the FastAPI app (`app.create_app`), its routers, error shapes and guards."""
