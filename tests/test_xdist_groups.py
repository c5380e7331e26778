"""The test run's grouping for pytest-xdist (tests/conftest.py) reaches xdist's scheduler.

Under ``--dist loadgroup`` (scripts/test.sh) the controller groups tests by the
``@GROUP`` suffix of the ids the workers report; a test whose id lacks it runs
wherever a worker is free, and a shared fixture of its group is built again there.
"""

from __future__ import annotations

import os

import pytest


@pytest.mark.xdist_group("grouped-ids")
def test_a_grouped_test_reports_its_group_to_the_scheduler(request: pytest.FixtureRequest) -> None:
    name = request.node.nodeid
    if os.environ.get("PYTEST_XDIST_WORKER") and request.config.getvalue("loadgroup"):
        assert name.endswith("::test_a_grouped_test_reports_its_group_to_the_scheduler"
                             "@grouped-ids"), name
    else:  # one process, or another --dist: the id is the plain one
        assert name.endswith("::test_a_grouped_test_reports_its_group_to_the_scheduler"), name


def test_an_ungrouped_test_keeps_its_plain_id(request: pytest.FixtureRequest) -> None:
    assert request.node.nodeid == (
        "tests/test_xdist_groups.py::test_an_ungrouped_test_keeps_its_plain_id")
