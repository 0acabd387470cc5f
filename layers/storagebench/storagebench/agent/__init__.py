"""The benchmark agent: stdlib-only, Python 3.9+, the same code on an EC2 instance and locally.

Nothing in this package may import outside the standard library, ``storagebench.agent`` and the
wire contract it shares with the domain, ``storagebench.protocol`` (tests enforce it): both are
shipped to instances as one zipapp without dependencies.
"""
