"""The benchmark agent: stdlib-only, Python 3.9+, the same code on an EC2 instance and locally.

Nothing in this package may import outside the standard library and ``storagebench.agent``
(tests enforce it): it is shipped to instances as a zipapp without dependencies.
"""
