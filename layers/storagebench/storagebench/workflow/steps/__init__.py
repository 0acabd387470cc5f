"""The workflow's steps: one module per Task state, named after its handler in ``functions/``.

Each step takes the document its state receives and returns the document the next state
needs. They are idempotent because Step Functions retries them: launches carry a client token,
file systems a creation token, records are keyed, and cleanup deletes whatever still carries
the run's tags, not only what the state remembers.

``plan``, ``provision``, ``check_ready``, ``start_agent``, ``record_failure``, ``collect``,
``cleanup``, ``sweep_run`` and ``finalize`` each hold their step; ``shared`` what several of them
read of a config (its stored request, labels, purchase and pending errors). This package
re-exports nothing: a handler imports its own step's module, so it loads only what that step uses.
"""
