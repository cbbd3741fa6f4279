"""``gitmedic serve``: the GitHub webhook service (FastAPI + uvicorn, imported only here)."""
