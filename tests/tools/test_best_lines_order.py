"""A file's best lines do not depend on the process's string hashes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

_PROGRAM = """
import json, sys
from memdir.tools._bm25terms import Tokenizer, best_lines
tok = Tokenizer()
words = "alpha bravo charlie delta echo foxtrot".split()
terms = [tok(w)[0] for w in words]
# Two lines whose weights sum to the same real number, 0.6; summed in the query's
# order, the first line's floats give 0.6000000000000001 and the second's 0.6.
weights = dict(zip(terms, [0.1, 0.2, 0.3, 0.3, 0.2, 0.1], strict=True))
text = "alpha bravo charlie\\ndelta echo foxtrot"
chosen = best_lines(tok, weights.__getitem__, text, " ".join(words), limit=1)
print(json.dumps([m.line for m in chosen]))
"""


def test_the_best_line_is_the_same_under_every_hash_seed() -> None:
    answers = set()
    for seed in range(12):
        env = dict(os.environ, PYTHONHASHSEED=str(seed))
        done = subprocess.run([sys.executable, "-c", _PROGRAM], env=env, capture_output=True,
                              text=True, timeout=120, check=True)
        answers.add(tuple(json.loads(done.stdout)))
    assert answers == {(1,)}
