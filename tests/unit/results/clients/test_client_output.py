"""Splitting fio's client/server JSON into one fio document per client."""

from __future__ import annotations

import json

import pytest
from client_captures import CLIENTS_333, CLIENTS_341, RANDRW_333, RANDRW_341, capture, document

from storagebench.results.clients.endpoints import FIO_DEFAULT_PORT, ClientEndpoint, parse_client
from storagebench.results.clients.errors import ClientOutputError, MissingClientError
from storagebench.results.clients.output import ALL_CLIENTS, is_client_output, load_client_json, split_clients
from storagebench.results.fio import parse_fio_jobs


def test_the_real_shape_client_stats_per_job_then_all_clients() -> None:
    randrw_333 = capture(RANDRW_333)
    raw = load_client_json(randrw_333)  # the servers' "<vm> ..." lines before the JSON are skipped
    assert "jobs" not in raw and [e["jobname"] for e in raw["client_stats"]] == ["mix"] * 4 + [ALL_CLIENTS]
    assert {(e["hostname"], e["port"]) for e in raw["client_stats"][:4]} == {
        ("127.0.0.1", 18765),
        ("127.0.0.1", 18766),
    }


def test_each_client_gets_a_fio_document_the_local_parsers_accept() -> None:
    randrw_333 = capture(RANDRW_333)
    run = split_clients(randrw_333, CLIENTS_333, "fio.json")
    assert [(c.index, c.endpoint.label) for c in run.clients] == [
        (1, "127.0.0.1:18765"),
        (2, "127.0.0.1:18766"),
    ]
    assert run.missing == [] and run.fio_version == "fio-3.33"
    assert run.all_clients is not None and run.all_clients["jobname"] == ALL_CLIENTS
    for client in run.clients:
        jobs = client.document["jobs"]
        assert len(jobs) == 2 and all("hostname" not in job for job in jobs)  # numjobs=2 on each
        parts = parse_fio_jobs(client.document)
        assert {p.direction for p in parts} == {"read", "write"}
        assert all(p.latency is not None and p.latency.basis == "lat" and p.latency.bins for p in parts)


def test_the_steps_order_names_the_clients_not_the_order_fio_finished() -> None:
    randrw_333 = capture(RANDRW_333)
    reversed_run = split_clients(randrw_333, list(reversed(CLIENTS_333)))
    assert [(c.index, c.endpoint.port) for c in reversed_run.clients] == [(1, 18766), (2, 18765)]
    # Without the step's clients: those fio reported, by host and port.
    assert [c.endpoint.port for c in split_clients(randrw_333).clients] == [18765, 18766]


def test_an_unreachable_client_is_missing_though_fio_exited_0() -> None:
    # fio printed "fio: failed to connect to 127.0.0.1:18799", ran the job on the other and exited 0.
    text = capture("randread-client-unreachable-fio-3.33.json")
    run = split_clients(text, ["127.0.0.1,18765", "127.0.0.1,18799"], "steps/s1/run/fio.json")
    assert [c.endpoint.port for c in run.clients] == [18765]
    assert len(run.missing) == 1 and isinstance(run.missing[0], MissingClientError)
    assert str(run.missing[0]) == (
        "steps/s1/run/fio.json: client 2 (127.0.0.1:18799): no entry in fio's output: "
        "the server was unreachable or never reported"
    )
    assert run.all_clients is None  # fio sums only when two or more clients reported


def test_an_entry_from_a_host_the_step_never_named_is_refused() -> None:
    randrw_333 = capture(RANDRW_333)
    # fio listed the 18765 client's entries first, then 18766's.
    with pytest.raises(
        ClientOutputError,
        match=r"client_stats\[2\]: an entry from 127\.0\.0\.1:18766, which is not one of the step's "
        r"clients \(10\.0\.0\.5:8765, 127\.0\.0\.1:18765\)",
    ):
        split_clients(randrw_333, ["10.0.0.5", "127.0.0.1,18765"])


def test_a_local_runs_output_is_not_client_output() -> None:
    local = json.dumps({"fio version": "fio-3.33", "jobs": []})
    assert not is_client_output(local)
    with pytest.raises(
        ClientOutputError,
        match=r"expected fio client/server output \(a 'client_stats' list\), got a local fio run's output",
    ):
        load_client_json(local, "fio.json")
    with pytest.raises(ClientOutputError, match="no fio JSON document in the output"):
        load_client_json("fio: failed to connect to 10.0.0.5:8765\n", "fio.json")


def test_truncated_output_is_not_parsed() -> None:
    randrw_333 = capture(RANDRW_333)
    with pytest.raises(ClientOutputError, match="no fio JSON document"):
        split_clients(randrw_333[: len(randrw_333) // 2], CLIENTS_333)


def test_malformed_entries_are_named() -> None:
    raw = document("randrw-2clients-fio-3.33.json")
    del raw["client_stats"][1]["hostname"]
    with pytest.raises(
        ClientOutputError,
        match=r"client_stats\[1\]: expected 'hostname' \(text\) and 'port' \(integer\), "
        r"got None and 18765",
    ):
        split_clients(raw, CLIENTS_333)
    raw = document("randrw-2clients-fio-3.33.json")
    raw["client_stats"].append(dict(raw["client_stats"][-1]))
    with pytest.raises(ClientOutputError, match=r"client_stats\[5\]: a second 'All clients' entry"):
        split_clients(raw, CLIENTS_333)
    raw["client_stats"] = [raw["client_stats"][-1]]
    with pytest.raises(ClientOutputError, match="client_stats holds no client's entry"):
        split_clients(raw)


def test_the_steps_clients_are_checked() -> None:
    raw = document("randrw-2clients-fio-3.33.json")
    with pytest.raises(
        ClientOutputError, match=r"the step's clients\[1\] '127.0.0.1,18765' repeats 127.0.0.1:18765"
    ):
        split_clients(raw, ["ip:127.0.0.1,18765", "127.0.0.1,18765"])
    with pytest.raises(
        ClientOutputError, match=r"the step's clients\[0\]: client 'h,99999': port '99999' is not 1..65535"
    ):
        split_clients(raw, ["h,99999"])


def test_later_fios_global_options_list_per_client() -> None:
    randrw_341 = capture(RANDRW_341)
    run = split_clients(randrw_341, CLIENTS_341)
    assert run.fio_version == "fio-3.41"
    for client in run.clients:
        assert client.document["global options"]["rw"] == "randrw"
        assert "hostname" not in client.document["global options"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10.0.0.5", ClientEndpoint("10.0.0.5", FIO_DEFAULT_PORT)),
        ("10.0.0.5,4444", ClientEndpoint("10.0.0.5", 4444)),
        ("ip:node-1.internal,4444", ClientEndpoint("node-1.internal", 4444)),
        ("ip6:::1,4444", ClientEndpoint("::1", 4444)),
    ],
)
def test_client_connect_strings(text: str, expected: ClientEndpoint) -> None:
    assert parse_client(text) == expected


def test_an_ipv6_label_is_bracketed() -> None:
    assert ClientEndpoint("::1", 4444).label == "[::1]:4444"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "expected host, host,port"),
        ("sock:/tmp/fio.sock", "expected host, host,port"),
        ("10.0.0.5,http", "port 'http' is not 1..65535"),
        ("10.0.0.5,0", "port '0' is not 1..65535"),
        (",8765", "expected host, host,port"),
    ],
)
def test_bad_connect_strings_say_what_is_allowed(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_client(text)
