"""What every layer shares and that imports nothing else of storagebench: the documents that flow
through the state machine, the tags on every resource, the stack's guardrails, the named errors,
the clock and the one spelling of a timestamp. The import arrows point here, never away."""
