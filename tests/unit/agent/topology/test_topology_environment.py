"""The topology environment every hook gets: who this machine is, and every role's addresses."""

from __future__ import annotations

import json
from pathlib import Path

from storagebench.protocol.topology import topology_environment, write_topology


def test_the_environment_names_this_machine_and_every_role_in_index_order(tmp_path: Path) -> None:
    topology = {
        "self": {"role": "chunk-server", "index": 1},
        "machines": [
            {"role": "chunk-server", "index": 1, "ip": "10.0.0.12", "instance_id": "i-2"},
            {"role": "client", "index": 0, "ip": "10.0.0.5"},
            {"role": "chunk-server", "index": 0, "ip": "10.0.0.11", "instance_id": "i-1"},
            {"role": "master", "index": 0, "ip": "10.0.0.10"},
            {"role": "client", "index": 1, "ip": "10.0.0.6"},
        ],
    }
    path = write_topology(topology, str(tmp_path))  # type: ignore[arg-type]
    env = topology_environment(topology, path)  # type: ignore[arg-type]
    assert env == {
        "SB_TOPOLOGY": path,
        "SB_NODE_ROLE": "chunk-server",
        "SB_NODE_INDEX": "1",
        "SB_NODE_IP": "10.0.0.12",
        "SB_NODES_CHUNK_SERVER_IPS": "10.0.0.11 10.0.0.12",
        "SB_NODES_CLIENT_IPS": "10.0.0.5 10.0.0.6",
        "SB_NODES_MASTER_IPS": "10.0.0.10",
    }
    assert json.loads(Path(path).read_text()) == topology
