"""How each stored config's repetitions stopped (adaptive series, fio's steady-state verdicts), read
from the ``collected`` summary of the workflow state the config item keeps.

Read leniently like the rest of a stored config: the summary is read whatever the state around it
looks like (an older or damaged state does not validate as a whole), and an entry that does not read
becomes a problem line naming the config and the entry.
"""

from __future__ import annotations

from collections.abc import Iterable

from storagebench.core.series import ConfigRepetitions, read_repetitions
from storagebench.store.models import StoredConfig, mapping


def config_repetitions(configs: Iterable[StoredConfig]) -> tuple[list[ConfigRepetitions], list[str]]:
    """The configs that recorded an adaptive series or a steady-state verdict, in the order given,
    and a problem line per unreadable entry."""
    return read_repetitions((c.config_id, mapping(c.state_document.get("collected"))) for c in configs)
