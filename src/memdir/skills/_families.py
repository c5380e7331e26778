"""The ALFWorld task pool: games on disk, their goal families, and the chain orders.

A task is one ``trial_*`` folder of a split (``valid_seen`` holds 140 of them
in 137 task folders). Its id is ``<task folder>/<trial folder>``, its family
comes from the folder-name prefix, and its goal is the sentence the game
itself prints after "Your task is to:" (baked into the game file's grammar).

Orders never depend on Python's random generator: a task's place inside its
family is the SHA-256 of ``"<seed>:<task id>"``, so an order is the same on
every machine and Python version, and :func:`order_digest` pins it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

__all__ = [
    "CHAIN_COUNT",
    "FAMILIES",
    "AlfworldTask",
    "family_of",
    "full_chain_order",
    "interleave",
    "list_tasks",
    "order_digest",
    "read_goal",
    "three_chain_orders",
]

# Folder-name prefix -> family id. The family order here is the round-robin order.
_PREFIXES: dict[str, str] = {
    "pick_and_place_simple": "pick_and_place",
    "pick_clean_then_place_in_recep": "clean",
    "pick_cool_then_place_in_recep": "cool",
    "pick_heat_then_place_in_recep": "heat",
    "look_at_obj_in_light": "look_at_obj_in_light",
    "pick_two_obj_and_place": "pick_two_obj",
}
FAMILIES: tuple[str, ...] = tuple(_PREFIXES.values())
CHAIN_COUNT = 3
GAME_FILE = "game.tw-pddl"
_GOAL = re.compile(r"Your task is to: (?P<goal>[^\"\\]*)")


class AlfworldTask(BaseModel):
    """One ALFWorld game: where it lives, its family and its goal sentence."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    family: str
    goal: str
    game_file: Path

    @property
    def folder(self) -> Path:
        """The trial folder holding the game file and ``traj_data.json``."""
        return self.game_file.parent


def family_of(task_folder: str) -> str:
    """The family id of a task folder name such as ``pick_and_place_simple-Mug-...``.

    Raises:
        ValueError: when the name starts with no known family prefix.
    """
    prefix = task_folder.split("-", 1)[0]
    if prefix not in _PREFIXES:
        known = ", ".join(_PREFIXES)
        raise ValueError(f"task folder {task_folder!r} has no known family prefix ({known})")
    return _PREFIXES[prefix]


def read_goal(game_file: Path) -> str:
    """The goal sentence of a game file, as the game prints it after "Your task is to:".

    Raises:
        ValueError: when the grammar carries no goal (an unprepared game file).
    """
    grammar = json.loads(game_file.read_text(encoding="utf-8"))["grammar"]
    match = _GOAL.search(grammar)
    if match is None or match.group("goal").startswith("UNKNOWN GOAL"):
        raise ValueError(f"{game_file} carries no goal in its grammar; use ALFWorld's "
                         "prepared game files (json_2.1.1), where the goal is filled in")
    return match.group("goal").strip()


def list_tasks(split_dir: Path) -> list[AlfworldTask]:
    """Every game under a split folder (e.g. ``.../alfworld/valid_seen``), sorted by id.

    Games whose file says ``"solvable": false`` are left out, as ALFWorld does.

    Raises:
        FileNotFoundError: when the folder does not exist or holds no game file.
    """
    if not split_dir.is_dir():
        raise FileNotFoundError(f"{split_dir} is not a folder; point at an ALFWorld split "
                                "such as <data>/alfworld/valid_seen")
    tasks = []
    for game_file in sorted(split_dir.glob(f"*/*/{GAME_FILE}")):
        if not json.loads(game_file.read_text(encoding="utf-8")).get("solvable", True):
            continue
        trial, folder = game_file.parent.name, game_file.parent.parent.name
        tasks.append(AlfworldTask(task_id=f"{folder}/{trial}", family=family_of(folder),
                                  goal=read_goal(game_file), game_file=game_file))
    if not tasks:
        raise FileNotFoundError(f"no */trial_*/{GAME_FILE} under {split_dir}")
    return tasks


def _rank(seed: int, task_id: str) -> str:
    return hashlib.sha256(f"{seed}:{task_id}".encode()).hexdigest()


def _by_family(tasks: Iterable[AlfworldTask], seed: int) -> dict[str, list[AlfworldTask]]:
    groups: dict[str, list[AlfworldTask]] = {family: [] for family in FAMILIES}
    for task in tasks:
        groups[task.family].append(task)
    for members in groups.values():
        members.sort(key=lambda t: _rank(seed, t.task_id))
    return groups


def interleave(groups: dict[str, list[AlfworldTask]]) -> list[AlfworldTask]:
    """Round-robin over the families in :data:`FAMILIES` order, skipping exhausted ones."""
    queues = [list(groups.get(family, [])) for family in FAMILIES]
    order: list[AlfworldTask] = []
    while any(queues):
        for queue in queues:
            if queue:
                order.append(queue.pop(0))
    return order


def full_chain_order(tasks: Sequence[AlfworldTask], seed: int = 0) -> list[AlfworldTask]:
    """All tasks in one fixed, seeded, family-interleaved order (the full-chain protocol).

    Each family is shuffled by the seed, then the families are taken round-robin.
    With valid_seen's family sizes the round-robin runs out of smaller families
    first, so the last tasks of the chain are all pick_and_place.
    """
    return interleave(_by_family(tasks, seed))


def three_chain_orders(tasks: Sequence[AlfworldTask], seed: int = 0,
                       ) -> list[list[AlfworldTask]]:
    """The tasks split into :data:`CHAIN_COUNT` chains, each family-interleaved.

    The rule: lay the families end to end (in :data:`FAMILIES` order, each shuffled
    by the seed as in the full chain) and deal that list like cards, task ``k`` to
    chain ``k mod 3``; then interleave each chain round-robin. Every chain thus gets
    about a third of every family (valid_seen: 47 / 47 / 46 tasks). Taking every
    third task of the full order instead would give each chain only two of the six
    families for most of its length, since 3 divides the round-robin period of 6.
    """
    groups = _by_family(tasks, seed)
    dealt: list[dict[str, list[AlfworldTask]]] = [
        {family: [] for family in FAMILIES} for _ in range(CHAIN_COUNT)]
    k = 0
    for family in FAMILIES:
        for task in groups[family]:
            dealt[k % CHAIN_COUNT][family].append(task)
            k += 1
    return [interleave(chain) for chain in dealt]


def order_digest(order: Sequence[AlfworldTask]) -> str:
    """SHA-256 over the task ids in order: equal digests mean position-identical orders."""
    return hashlib.sha256("\n".join(t.task_id for t in order).encode()).hexdigest()
