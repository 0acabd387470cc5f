"""DynamoDB Local, the real engine: fetched with Maven once, started with Java, the results table
built from template.yaml, data kept across a restart with the same data directory.

Needs java, and mvn plus Maven Central the first time (the jars are then cached under
.storagebench/dynamodb-local/); each test says why it is skipped when they are missing.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storagebench_local.dynamodb_local import (
    DYNAMODB_LOCAL_VERSION,
    DynamoDBLocal,
    DynamoDBLocalUnavailable,
    default_cache_dir,
    ensure_installed,
)
from storagebench_local.dynamodb_shared import (
    IDLE_VARIABLE,
    InvalidIdleTimeout,
    idle_timeout_s,
    read_state,
    shared_dynamodb_local,
    stop_shared,
)
from storagebench_local.template import Template

pytest.importorskip("boto3", reason="boto3 is not installed (the aws extra)")
YAML_MISSING = "PyYAML is not installed (the local extra: pip install -e '.[local]')"

REPO = Path(__file__).resolve().parents[3]
TABLE = "storagebench-results"


def cached() -> bool:
    lib = default_cache_dir() / "lib"
    return (lib / f".complete-{DYNAMODB_LOCAL_VERSION}").is_file()


@pytest.fixture(scope="module")
def lib_dir() -> Path:
    if shutil.which("java") is None:
        pytest.skip(
            "java is not installed: DynamoDB Local needs a Java 17 runtime "
            "(apt-get install openjdk-17-jre-headless)"
        )
    if shutil.which("mvn") is None and not cached():
        pytest.skip(
            f"mvn is not installed and DynamoDB Local is not cached in {default_cache_dir()} "
            "(apt-get install maven)"
        )
    try:
        return ensure_installed()
    except DynamoDBLocalUnavailable as error:
        if error.missing == "network":
            pytest.skip(f"Maven Central is unreachable and nothing is cached: {error}")
        raise


@pytest.fixture
def server(tmp_path: Path, lib_dir: Path) -> Iterator[DynamoDBLocal]:
    db = DynamoDBLocal(tmp_path, cache_dir=lib_dir.parent)
    try:
        yield db
    finally:
        db.stop()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"


def item(run: str, sk: str, **extra: str) -> dict[str, Any]:
    values = {"PK": f"RUN#{run}", "SK": sk, **extra}
    return {key: {"S": value} for key, value in values.items()}


@pytest.mark.slow
def test_results_table_from_the_template_persists_across_a_restart(
    server: DynamoDBLocal, tmp_path: Path
) -> None:
    pytest.importorskip("yaml", reason=YAML_MISSING)
    server.start()
    assert server.endpoint_url.startswith("http://127.0.0.1:")
    assert server.startup_s is not None and server.startup_s < 60
    rss = server.rss_bytes()
    print(
        f"\nDynamoDB Local {DYNAMODB_LOCAL_VERSION}: started in {server.startup_s:.2f} s, "
        f"RSS {rss and rss >> 20} MiB"
    )

    client = server.client()
    client.create_table(**Template(REPO / "template.yaml").table_kwargs("ResultsTable", TABLE))
    client.get_waiter("table_exists").wait(TableName=TABLE, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    described = client.describe_table(TableName=TABLE)["Table"]
    assert {index["IndexName"] for index in described["GlobalSecondaryIndexes"]} == {"GSI1", "GSI2", "GSI3"}

    client.put_item(TableName=TABLE, Item=item("r1", "RUN", GSI1PK="SUITE#nightly", GSI1SK="2025-01-01#r1"))
    client.put_item(TableName=TABLE, Item=item("r1", "CONFIG#gp3"))
    client.put_item(TableName=TABLE, Item=item("r2", "RUN", GSI1PK="SUITE#nightly", GSI1SK="2025-01-02#r2"))
    run = client.query(
        TableName=TABLE, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": {"S": "RUN#r1"}}
    )
    assert [entry["SK"]["S"] for entry in run["Items"]] == ["CONFIG#gp3", "RUN"]
    history = client.query(
        TableName=TABLE,
        IndexName="GSI1",
        KeyConditionExpression="GSI1PK = :suite",
        ExpressionAttributeValues={":suite": {"S": "SUITE#nightly"}},
        ScanIndexForward=False,
    )
    assert [entry["PK"]["S"] for entry in history["Items"]] == ["RUN#r2", "RUN#r1"]

    pid = server.pid
    assert pid is not None
    server.stop()
    assert not server.running
    deadline = time.monotonic() + 5
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pid_alive(pid), "the JVM outlived stop()"
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.endpoint_url

    assert any((tmp_path / "dynamodb").iterdir()), "nothing written to the data directory"
    with DynamoDBLocal(tmp_path, cache_dir=server.cache_dir) as again:
        client = again.client()
        assert client.list_tables()["TableNames"] == [TABLE]
        persisted = client.get_item(TableName=TABLE, Key={"PK": {"S": "RUN#r1"}, "SK": {"S": "RUN"}})
        assert persisted["Item"]["GSI1SK"]["S"] == "2025-01-01#r1"
        assert client.scan(TableName=TABLE, Select="COUNT")["Count"] == 3


@pytest.mark.slow
def test_in_memory_writes_no_data_directory(tmp_path: Path, lib_dir: Path) -> None:
    pytest.importorskip("yaml", reason=YAML_MISSING)
    with DynamoDBLocal(tmp_path, cache_dir=lib_dir.parent, in_memory=True) as db:
        db.client().create_table(**Template(REPO / "template.yaml").table_kwargs("ResultsTable", TABLE))
        assert db.client().list_tables()["TableNames"] == [TABLE]
    assert not (tmp_path / "dynamodb").exists()


def test_a_jvm_that_exits_is_reported_with_its_stderr(tmp_path: Path, lib_dir: Path) -> None:
    db = DynamoDBLocal(tmp_path, cache_dir=lib_dir.parent, jvm_args=["-Xmx1k"], startup_timeout_s=30)
    with pytest.raises(DynamoDBLocalUnavailable) as raised:
        db.start()
    assert raised.value.missing == "startup"
    assert "exited with status" in str(raised.value)
    assert "heap" in str(raised.value).lower()  # the JVM's own complaint, from its output
    assert not db.running


def test_a_jvm_that_never_answers_fails_after_its_budget_of_progress(tmp_path: Path, lib_dir: Path) -> None:
    java = tmp_path / "java"  # starts, binds nothing and waits: no CPU wanted, so progress = wall
    java.write_text("#!/bin/sh\nexec sleep 60\n")
    java.chmod(0o755)
    db = DynamoDBLocal(tmp_path, cache_dir=lib_dir.parent, java=str(java), startup_timeout_s=1.5)
    started = time.monotonic()
    with pytest.raises(DynamoDBLocalUnavailable) as raised:
        db.start()
    assert time.monotonic() - started >= 1.5
    assert raised.value.missing == "startup"
    assert "within 1.5 s of its own progress (wall " in str(raised.value)
    assert "for a CPU and the hypervisor took " in str(raised.value)
    assert "; at most 15 s of wall)" in str(raised.value)
    assert not db.running


def test_missing_java_is_named(tmp_path: Path) -> None:
    with pytest.raises(DynamoDBLocalUnavailable) as raised:
        DynamoDBLocal(tmp_path, java="no-such-java-here").start()
    assert raised.value.missing == "java"
    assert "no-such-java-here" in str(raised.value)


def test_missing_maven_is_named_when_nothing_is_cached(tmp_path: Path) -> None:
    with pytest.raises(DynamoDBLocalUnavailable) as raised:
        ensure_installed(tmp_path / "empty-cache", mvn="no-such-mvn-here")
    assert raised.value.missing == "mvn"
    assert "no-such-mvn-here" in str(raised.value)
    assert str(tmp_path / "empty-cache" / "lib") in str(raised.value)


def test_a_cached_install_needs_neither_maven_nor_the_network(lib_dir: Path) -> None:
    started = time.perf_counter()
    assert ensure_installed(lib_dir.parent, mvn="no-such-mvn-here") == lib_dir
    assert time.perf_counter() - started < 1
    assert (lib_dir / f"DynamoDBLocal-{DYNAMODB_LOCAL_VERSION}.jar").is_file()
    assert any(path.name.startswith("libsqlite4java-") for path in lib_dir.iterdir())


# ------------------------------------------------------------------------ the shared server


@pytest.fixture
def shared_root(tmp_path: Path, lib_dir: Path) -> Iterator[Path]:
    """A root for a shared server; whatever runs there is stopped after the test."""
    try:
        yield tmp_path
    finally:
        stop_shared(tmp_path)
        assert read_state(tmp_path) is None


def test_the_shared_server_is_reused_between_commands(shared_root: Path, lib_dir: Path) -> None:
    started = time.monotonic()
    with shared_dynamodb_local(shared_root, idle_s=600, cache_dir=lib_dir.parent) as first:
        cold = time.monotonic() - started
        first.client().create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        assert (shared_root / "dynamodb-local.leases" / str(os.getpid())).is_file()
    assert not any((shared_root / "dynamodb-local.leases").iterdir())  # released
    state = read_state(shared_root)
    assert state is not None and pid_alive(state.jvm_pid) and pid_alive(state.keeper_pid)

    started = time.monotonic()
    with shared_dynamodb_local(shared_root, idle_s=600, cache_dir=lib_dir.parent) as second:
        warm = time.monotonic() - started
        assert second.endpoint_url == first.endpoint_url and second.pid == first.pid
        assert second.client().list_tables()["TableNames"] == [TABLE]
    print(f"\nshared DynamoDB Local: cold {cold:.2f} s, warm {warm:.3f} s")
    assert warm < 1.0 < cold


def test_a_dead_shared_server_is_restarted_transparently(shared_root: Path, lib_dir: Path) -> None:
    with shared_dynamodb_local(shared_root, idle_s=600, cache_dir=lib_dir.parent) as first:
        pass
    state = read_state(shared_root)
    assert state is not None
    os.kill(state.keeper_pid, signal.SIGKILL)  # the keeper dies without stopping its JVM
    deadline = time.monotonic() + 5
    while pid_alive(state.keeper_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    with shared_dynamodb_local(shared_root, idle_s=600, cache_dir=lib_dir.parent) as again:
        assert again.pid != first.pid
        assert again.client().list_tables()["TableNames"] == []
    deadline = time.monotonic() + 10
    while pid_alive(state.jvm_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(state.jvm_pid), "the orphaned JVM was left running"


def test_the_shared_server_stops_itself_when_idle(shared_root: Path, lib_dir: Path) -> None:
    with shared_dynamodb_local(shared_root, idle_s=1.5, cache_dir=lib_dir.parent):
        state = read_state(shared_root)
        assert state is not None
        time.sleep(3)  # a command holding its lease keeps the server, however long it runs
        assert pid_alive(state.jvm_pid)
    deadline = time.monotonic() + 30
    while (pid_alive(state.jvm_pid) or pid_alive(state.keeper_pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pid_alive(state.jvm_pid) and not pid_alive(state.keeper_pid)
    assert read_state(shared_root) is None
    assert "idle for 1.5 s: stopped" in (shared_root / "dynamodb-local.log").read_text()


def test_without_an_idle_timeout_each_command_has_its_own_server(
    tmp_path: Path, lib_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(IDLE_VARIABLE, "0")
    with shared_dynamodb_local(tmp_path, cache_dir=lib_dir.parent) as own:
        assert isinstance(own, DynamoDBLocal) and own.running
    assert not own.running and read_state(tmp_path) is None


def test_the_idle_timeout_is_checked() -> None:
    assert idle_timeout_s() == 0  # under pytest: no shared server unless a test asks for one
    assert idle_timeout_s(60) == 60
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(IDLE_VARIABLE, "soon")
        with pytest.raises(
            InvalidIdleTimeout, match=r"STORAGEBENCH_DYNAMODB_LOCAL_IDLE_S='soon' is not a number"
        ):
            idle_timeout_s()
        patch.setenv(IDLE_VARIABLE, "-5")
        with pytest.raises(InvalidIdleTimeout, match=r"=-5.0: the idle timeout is 0"):
            idle_timeout_s()
        patch.setenv(IDLE_VARIABLE, "900")
        assert idle_timeout_s() == 900
