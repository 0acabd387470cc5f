"""Output shared by every command: the consoles, JSON printing, and failing with exit status 2.

Commands import from here (never from cli.main, which imports the commands).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import typer
from rich.console import Console, ConsoleDimensions
from rich.text import Text

# Piped output (CI logs, `| less`) gets 160 columns, not rich's 80: the tables are wide.
PIPED_WIDTH = 160


def _width(stream: Any) -> int | None:
    if os.environ.get("COLUMNS", "").isdigit():
        return int(os.environ["COLUMNS"])
    return None if stream.isatty() else PIPED_WIDTH


class TerminalConsole(Console):
    """A console measured at each print: ``COLUMNS`` when set (read then, not at import), else a
    width given to it, else the terminal's, else ``PIPED_WIDTH``."""

    @property
    def size(self) -> ConsoleDimensions:
        measured = super().size  # the width given (console.width = N), else the terminal's
        if os.environ.get("COLUMNS", "").isdigit():
            return ConsoleDimensions(int(os.environ["COLUMNS"]), measured.height)
        if self._width is not None:
            return measured
        return ConsoleDimensions(_width(self.file) or measured.width, measured.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


out = TerminalConsole()
err = TerminalConsole(stderr=True)
EXIT_INVALID = 2


def fail(message: str, code: int = EXIT_INVALID) -> typer.Exit:
    err.print(Text.assemble(("error: ", "bold red"), message), highlight=False, soft_wrap=True)
    return typer.Exit(code)


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, default=str) + "\n")
