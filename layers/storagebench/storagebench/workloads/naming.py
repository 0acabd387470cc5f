"""A workload's name when the request overrides its profile's parameters: ``std-randread-4k[bs=8k]``.

Every output (records, the store's keys, the report, the CLI) names a workload by its id, so an
override must show in the id or two different measurements would read as one: ``bs=8k`` and
``bs=64k`` runs of the same profile would collide, and a reader could not tell a tuned run from
the profile. The name is deterministic: parameters sorted by name, each value in its canonical
spelling (sizes as fio writes them, ``8k``; durations in seconds, ``30s``; numbers without
trailing zeros), a swept list as its values joined by ``|``. An override equal to the profile's
default changes nothing measured and is left out, so it names the profile itself. Text values
(a job file, a command) are named by a digest: long, multi-line and possibly sensitive, they
would make unreadable keys. A request's explicit ``id`` always wins (``request.model``).

The characters are chosen to survive every place a workload id goes: no ``#`` (the store's key
separator), no ``:`` (the requirement syntax ``WORKLOAD:METRIC``), and the override list sits
in one pair of brackets so a requirement or a query can find where the id ends.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from storagebench.workloads.library import PROFILES
from storagebench.workloads.params import Param, ParamValue, format_size
from storagebench.workloads.profile import ParamsError, Profile, check_params, default_value

LIST_SEPARATOR = "|"
TEXT_DIGEST_CHARS = 8


def _spell(param: Param, value: ParamValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if param.kind == "text":
        return "sha256-" + hashlib.sha256(str(value).encode()).hexdigest()[:TEXT_DIGEST_CHARS]
    if param.kind == "size" and isinstance(value, int):
        return format_size(value)
    if param.kind == "duration" and isinstance(value, int | float):
        return f"{value:g}s"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def workload_name(profile: Profile, overrides: Mapping[str, ParamValue | list[ParamValue]]) -> str:
    """``profile[name=value,...]`` for the overrides that differ from the defaults, else the profile's name.

    ``overrides`` are validated values (``profile.check_params``); an unknown name is a KeyError.
    """
    shown: list[str] = []
    for name in sorted(overrides):
        param = profile.param(name)
        value = overrides[name]
        if value == default_value(param):
            continue
        if isinstance(value, list):
            spelled = LIST_SEPARATOR.join(_spell(param, item) for item in value)
        else:
            spelled = _spell(param, value)
        shown.append(f"{name}={spelled}")
    return f"{profile.name}[{','.join(shown)}]" if shown else profile.name


def requested_name(profile_name: str, params: object) -> str:
    """The id a request's profile workload gets from its raw ``params`` (before validation).

    For the checks that run on a raw document (``request.references``: duplicate ids): params
    the profile rejects, or an unknown profile, are reported by the model at their own field,
    so here they leave the plain profile name.
    """
    profile = PROFILES.get(profile_name)
    if profile is None or not isinstance(params, Mapping):
        return profile_name
    try:
        return workload_name(profile, check_params(profile, params))
    except ParamsError:
        return profile_name
