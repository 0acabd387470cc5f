"""S3 for the agent: GetObject (its task token), PutObject, and a sync of the output directory to
its prefix.

Path-style addresses with an endpoint override (a local server), virtual-hosted ones on AWS
(path style is deprecated there), except for bucket names with dots, which TLS cannot serve
virtual-hosted.
"""

from __future__ import annotations

import os
import urllib.parse
from typing import Dict, List, Tuple

from storagebench.agent.aws.client import Client, regional

CONTENT_TYPES = {".json": "application/json", ".log": "text/plain", ".txt": "text/plain", ".csv": "text/csv"}


def parse_s3_uri(uri: str) -> Tuple[str, str]:
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme != "s3" or not parts.netloc:
        raise ValueError(f"not an s3:// address: {uri!r}")
    return parts.netloc, parts.path.lstrip("/")


class S3:
    def __init__(self, client: Client) -> None:
        self.client = client

    def url(self, bucket: str, key: str) -> str:
        quoted = urllib.parse.quote(key, safe="/-_.~")
        if self.client.override:
            return f"{self.client.override}/{bucket}/{quoted}"
        if "." in bucket:
            return f"{regional('s3', self.client.region)}/{bucket}/{quoted}"
        return f"https://{bucket}.s3.{self.client.region}.amazonaws.com/{quoted}"

    def put(self, uri: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        bucket, key = parse_s3_uri(uri)
        self.client.request(
            f"PutObject s3://{bucket}/{key}",
            "PUT",
            self.url(bucket, key),
            data,
            {"Content-Type": content_type},
        )

    def get(self, uri: str) -> bytes:
        bucket, key = parse_s3_uri(uri)
        return bytes(self.client.request(f"GetObject s3://{bucket}/{key}", "GET", self.url(bucket, key)).body)


class DirectorySync:
    """Uploads a directory's new and changed files under an ``s3://`` prefix (``aws s3 sync``, one writer)."""

    def __init__(self, s3: S3, directory: str, prefix_uri: str) -> None:
        parse_s3_uri(prefix_uri)
        self.s3 = s3
        self.directory = directory
        self.prefix = prefix_uri if prefix_uri.endswith("/") else prefix_uri + "/"
        self._sent: Dict[str, Tuple[int, int]] = {}

    def pending(self) -> List[str]:
        found: List[str] = []
        for root, _dirs, files in os.walk(self.directory):
            for name in sorted(files):
                path = os.path.join(root, name)
                try:
                    stat = os.stat(path)
                except FileNotFoundError:
                    continue  # replaced meanwhile (atomic rewrites): the next sync takes it
                relative = os.path.relpath(path, self.directory).replace(os.sep, "/")
                if self._sent.get(relative) != (stat.st_size, stat.st_mtime_ns):
                    found.append(relative)
        return sorted(found)

    def run(self) -> int:
        """Upload what changed since the last call; returns how many files went. Raises AwsError."""
        sent = 0
        for relative in self.pending():
            path = os.path.join(self.directory, relative)
            try:
                stat = os.stat(path)
                with open(path, "rb") as handle:
                    data = handle.read()
            except FileNotFoundError:
                continue
            extension = os.path.splitext(relative)[1]
            self.s3.put(
                self.prefix + relative, data, CONTENT_TYPES.get(extension, "application/octet-stream")
            )
            self._sent[relative] = (stat.st_size, stat.st_mtime_ns)
            sent += 1
        return sent
