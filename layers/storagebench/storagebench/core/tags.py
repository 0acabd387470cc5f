"""The tags storagebench puts on everything it creates: cleanup, the janitor and IAM find resources
by them (IAM conditions name ``storagebench:stack``, template.yaml)."""

from __future__ import annotations

TAG_RUN = "storagebench:run-id"
TAG_CONFIG = "storagebench:config-id"
TAG_EXPIRES = "storagebench:expires-at"
TAG_STACK = "storagebench:stack"
TAG_TARGET = "storagebench:target-id"  # on file systems and gateway parts: which target of the config
TAG_ROLE = "storagebench:role"  # on a gateway appliance: what the instance is for
TAG_NODE = "storagebench:node"  # on a config's other machines: <role>-<index> (controller-2, client-1)
TAG_CLIENT_TOKEN = "storagebench:client-token"  # on instances: finds a launch whose answer was lost
