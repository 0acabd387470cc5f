"""storagebench: benchmark cloud storage, price it, compare it.

This module must stay import-free: the on-instance agent (``storagebench.agent``) is shipped
as a stdlib-only zipapp containing only this file and the ``agent`` subpackage.
"""

__version__ = "0.1.0"
