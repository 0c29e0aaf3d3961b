"""Replicas on Ray Serve: `finrag serve --num-replicas N` (optional extra `finrag[ray]`).

An ingress deployment takes every HTTP request, computes its affinity key (affinity.py) and
forwards it through a deployment handle to one of N full pipelines (deployment.py); the
handle's request router (router.py) sends requests with the same key to the same replica,
so its prefix cache holds their KV blocks. Ray is imported only here, never by a
single-process server.
"""
