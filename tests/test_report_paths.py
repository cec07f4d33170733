"""``ddl_gym.report_paths.ResumeFile``: what a long report keeps between runs survives an interrupted save."""

from __future__ import annotations

import os

import pytest

from ddl_gym.report_paths import ResumeFile


def test_items_saved_are_loaded_under_equal_settings_only(tmp_path):
    resume = ResumeFile(tmp_path / "board.md", {"code": "a"}, "rows")
    assert resume.load() == []
    resume.save([1, 2])
    assert ResumeFile(tmp_path / "board.md", {"code": "a"}, "rows").load() == [1, 2]
    with pytest.raises(ValueError, match="board.partial.json was made under other settings"):
        ResumeFile(tmp_path / "board.md", {"code": "b"}, "rows").load()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board.partial.json"]  # nothing left beside it
    resume.remove()
    assert not any(tmp_path.iterdir())


def test_a_save_interrupted_before_the_rename_leaves_the_previous_items(tmp_path, monkeypatch):
    resume = ResumeFile(tmp_path / "board.md", {"code": "a"}, "rows")
    resume.save([1])

    def killed(*_args, **_kwargs):
        raise KeyboardInterrupt  # the run stops between writing the new items and renaming them

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        resume.save([1, 2])
    monkeypatch.undo()
    assert resume.load() == [1]  # the kept file is whole and holds the last completed save
    resume.save([1, 2, 3])  # the next save replaces the leftover beside it
    assert resume.load() == [1, 2, 3]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board.partial.json"]
