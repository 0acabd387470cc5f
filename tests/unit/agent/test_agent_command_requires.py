"""A command phase's ``requires``: checked on the machine before the command starts; a missing
program or path fails the step naming it, and the command is never started."""

from __future__ import annotations

from pathlib import Path

from storagebench.agent.engines import PhaseContext, missing_requirements, run_phase


def ctx(tmp_path: Path) -> PhaseContext:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    return PhaseContext(
        str(tmp_path), "filesystem", str(workdir), str(tmp_path / "phase"), None, is_root=False
    )


def test_missing_programs_and_paths_are_named_and_present_ones_pass(tmp_path: Path) -> None:
    (tmp_path / "ref").mkdir()
    requires = ["sh", "no-such-program-sb", str(tmp_path / "ref"), str(tmp_path / "fastqs")]
    assert missing_requirements(requires, "/usr/bin:/bin") == ["no-such-program-sb", str(tmp_path / "fastqs")]
    assert missing_requirements(["sh"], str(tmp_path)) == ["sh"]  # looked up on the PATH given


def test_a_command_missing_what_it_requires_fails_before_it_starts(tmp_path: Path) -> None:
    phase = {
        "name": "run",
        "engine": "command",
        "command": {
            "script": 'touch "$SB_TARGET_DIR/started"',
            "requires": ["cellranger", "/data/fastqs-sb"],
        },
    }
    context = ctx(tmp_path)
    result = run_phase(phase, context)  # type: ignore[arg-type]
    assert result["status"] == "failed"
    assert result["missing"] == ["cellranger", "/data/fastqs-sb"]
    assert result["error"] is not None and result["error"].startswith(
        "the command requires cellranger, /data/fastqs-sb, not on this instance"
    )
    assert result["rc"] is None
    assert not (Path(str(context.workdir)) / "started").exists()


def test_a_command_with_what_it_requires_runs(tmp_path: Path) -> None:
    phase = {
        "name": "run",
        "engine": "command",
        "command": {"script": 'touch "$SB_TARGET_DIR/started"', "requires": ["sh", str(tmp_path)]},
    }
    context = ctx(tmp_path)
    result = run_phase(phase, context)  # type: ignore[arg-type]
    assert result["status"] == "ok", result
    assert (Path(str(context.workdir)) / "started").exists()
