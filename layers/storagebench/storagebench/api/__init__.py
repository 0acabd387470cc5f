"""The on-demand HTTP API: start, preview, list, read and stop runs; query results.

``service.ApiService`` is the logic (it receives its ports: the results store, a run launcher, a
report link signer and a run sweeper); ``routes`` maps HTTP API requests onto it with Powertools'
event handler; ``openapi`` builds the checked-in OpenAPI document from the same route table and
models. ``functions/api/app.py`` is the Lambda entry point.
"""
