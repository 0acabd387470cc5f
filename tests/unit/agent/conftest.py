"""The agent's tests share the fake AWS endpoint of tests.support (stdlib and pytest only: these run
under Python 3.9 too, ``make test-agent-py39``)."""

from tests.support.fake_aws import fake, fake_server

__all__ = ["fake", "fake_server"]
