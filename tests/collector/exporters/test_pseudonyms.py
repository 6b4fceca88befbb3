"""Worker pseudonyms: stable per release, unlinkable across releases, optional."""

from __future__ import annotations

import hashlib
import hmac
import re

import pytest

from collector.exporters import PseudonymCollisionError, Pseudonymizer, new_release_salt


def test_stable_within_a_release():
    salt = new_release_salt()
    first, second = Pseudonymizer(salt), Pseudonymizer(salt)
    assert first(17) == first(17) == second(17) == second("17")
    assert re.fullmatch(r"w-[0-9a-f]{8}", first(17))
    assert first(17) != first(18)


def test_different_across_releases():
    workers = range(200)
    one = Pseudonymizer(new_release_salt())
    two = Pseudonymizer(new_release_salt())
    assert not {one(w) for w in workers} & {two(w) for w in workers}


def test_is_hmac_sha256_of_the_worker_id():
    salt = "0123456789abcdef0123456789abcdef"
    expected = hmac.new(salt.encode(), b"42", hashlib.sha256).hexdigest()[:6]
    assert Pseudonymizer(salt, length=6)(42) == f"w-{expected}"


def test_omit_and_missing_workers():
    omit = Pseudonymizer(new_release_salt(), omit=True)
    assert omit(5) is None
    assert omit.many([1, 2]) == [None, None]
    assert Pseudonymizer(new_release_salt())(None) is None


def test_salt_is_required_and_never_shown():
    with pytest.raises(ValueError, match="salt"):
        Pseudonymizer("short")
    salt = new_release_salt()
    assert salt not in repr(Pseudonymizer(salt))


def test_collisions_are_refused_and_fitted_avoids_them():
    salt = "fixed-salt-for-the-collision-test"
    short = Pseudonymizer(salt, length=4)
    with pytest.raises(PseudonymCollisionError):
        for worker in range(2000):  # 2,000 ids in 65,536 prefixes: a clash is certain
            short(worker)
    fitted = Pseudonymizer.fitted(salt, range(2000), min_length=4)
    assert fitted.length > 4
    names = fitted.many(range(2000))
    assert len(set(names)) == 2000
    assert Pseudonymizer.fitted(salt, range(2000), min_length=4).many(range(2000)) == names
    assert Pseudonymizer.fitted(salt, [1, 2, 3]).length == 6


def test_rejects_objects_that_are_not_ids():
    with pytest.raises(TypeError):
        Pseudonymizer(new_release_salt())(object())
