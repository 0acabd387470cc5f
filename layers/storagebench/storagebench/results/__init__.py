"""From raw agent output to normalized records and their statistics."""
