"""A local stand-in for the SSM agent: the stack's command document, run on this machine."""
