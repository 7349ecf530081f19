"""Scoring ATIF trajectory files (the Agent Trajectory Interchange Format, Harbor RFC 0001, that Arize Phoenix
imports): the ``atif`` dataset source and the ``atif_replay`` system.

``atif`` turns each trajectory file into a sample: the question is the first user step's message, the id the
trajectory's ``trajectory_id``, else its ``session_id``, else the file's path under ``path`` without ``.json``;
``metadata["atif"]`` names the file, the ids and the agent. ``atif_replay`` answers a sample with what its file
recorded (the last agent message as the answer, every step as the output's trajectory, tokens summed over the
model calls, latency from the timestamps; :func:`ragassay.load_atif`): nothing is executed again (it declares
``replays``). It answers samples of any source whose ids are the trajectories' ids, so a dataset of your own with
reference answers and expected tool calls scores the trajectories an agent wrote.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import (
    AtifTrajectory,
    ConfigError,
    DatasetError,
    DatasetSource,
    RAGOutput,
    RAGSystem,
    Sample,
    hookimpl,
    load_atif,
)


class AtifOptions(BaseModel):
    """Options of the atif dataset source."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="An ATIF JSON file, or a folder searched for *.json files (recursively).")


def atif_files(root: Path) -> list[Path]:
    """The ATIF files of ``path`` (a file, or a folder's *.json files in path order); an error when none."""
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise DatasetError(f"{root}: no such file or folder of ATIF trajectories")
    files = sorted(p for p in root.rglob("*.json") if p.is_file())
    if not files:
        raise DatasetError(f"{root}: holds no *.json ATIF trajectory file")
    return files


def trajectory_key(trajectory: AtifTrajectory, file: Path, root: Path) -> str:
    """A trajectory's sample id: its trajectory_id, else its session_id, else the file's path without .json."""
    if trajectory.trajectory_id or trajectory.session_id:
        return trajectory.trajectory_id or trajectory.session_id
    relative = file.relative_to(root) if root.is_dir() else Path(file.name)
    return relative.with_suffix("").as_posix()


def _indexed(root: Path) -> Iterator[tuple[str, Path, AtifTrajectory]]:
    """(id, file, trajectory) of every file; an id given by two files is an error naming both."""
    seen: dict[str, Path] = {}
    for file in atif_files(root):
        trajectory = load_atif(file)
        key = trajectory_key(trajectory, file, root)
        if key in seen:
            raise DatasetError(
                f"{file}: trajectory id '{key}' is also the id of {seen[key]}; give each trajectory its own "
                "trajectory_id (or session_id)"
            )
        seen[key] = file
        yield key, file, trajectory


def _relative(file: Path, root: Path) -> str:
    return (file.relative_to(root) if root.is_dir() else Path(file.name)).as_posix()


class AtifSource(DatasetSource):
    """Samples from ATIF trajectory files, one per file, asked with its first user message."""

    name = "atif"
    Options = AtifOptions

    def samples(self) -> Iterator[Sample]:
        root = self.context.resolve(self.options.path)
        for key, file, trajectory in _indexed(root):
            if not trajectory.question:
                raise DatasetError(
                    f"{file}: no user step with a message, so no question to ask (ATIF 'source': 'user')"
                )
            agent = trajectory.agent
            yield Sample(
                question_id=key,
                question=trajectory.question,
                metadata={"atif": {**_ids(trajectory), "file": _relative(file, root)}},
                model=str(agent.get("model_name") or ""),
                service_version=str(agent.get("version") or ""),
            )


def _ids(trajectory: AtifTrajectory) -> dict[str, Any]:
    return {
        "trajectory_id": trajectory.trajectory_id,
        "session_id": trajectory.session_id,
        "agent": str(trajectory.agent.get("name") or ""),
        "schema_version": trajectory.schema_version,
    }


class AtifReplayOptions(BaseModel):
    """Options of the atif_replay system."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(
        None,
        description="An ATIF JSON file or a folder of them (relative to the project); unset: the path of the "
        "project's atif dataset source.",
    )


class AtifReplayRAG(RAGSystem):
    """Replays what an ATIF trajectory file recorded (answer, steps, tokens, latency): executes nothing."""

    name = "atif_replay"
    Options = AtifReplayOptions
    replays = True

    @classmethod
    def content_key(cls, options: AtifReplayOptions, context) -> str | None:
        """sha256 over the files (path and content): an edited file is a new system, never a resume."""
        try:
            root = context.resolve(_path(options, context))
            files = atif_files(root)
        except (ConfigError, DatasetError):
            return None
        digest = hashlib.sha256()
        for file in files:
            digest.update(_relative(file, root).encode("utf-8") + b"\0" + file.read_bytes() + b"\0")
        return digest.hexdigest()

    def prepare(self, corpus) -> None:
        self.root = self.context.resolve(_path(self.options, self.context))
        self.files = {key: file for key, file, _ in _indexed(self.root)}

    def check_samples(self, samples) -> list[str]:
        """A warning naming the trajectories that answer no sample (a missing one fails its sample)."""
        extra = sorted(set(self.files) - {s.question_id for s in samples})
        if not extra:
            return []
        shown = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
        return [f"{len(extra)} ATIF trajectory file(s) match no sample: {shown}"]

    async def answer(self, sample: Sample) -> RAGOutput:
        file = self.files.get(sample.question_id)
        if file is None:
            raise LookupError(
                f"no ATIF trajectory with id '{sample.question_id}' under {self.options.path or 'the atif source path'}"
                " (ids: trajectory_id, else session_id, else the file's path without .json)"
            )
        trajectory = load_atif(file)
        return RAGOutput(
            answer=trajectory.answer,
            usage=trajectory.usage,
            latency_s=trajectory.latency_s,
            trajectory=trajectory.steps,
            trace={"atif": {**_ids(trajectory), "file": _relative(file, self.root), "skipped": trajectory.skipped}},
        )


def _path(options: AtifReplayOptions, context) -> str:
    if options.path:
        return options.path
    dataset = context.settings.get("dataset") or {}
    path = (dataset.get("options") or {}).get("path") if dataset.get("source") == "atif" else None
    if not path:
        raise ConfigError(
            "atif_replay: set options.path to the ATIF file or folder (the dataset source is not 'atif', so there "
            "is no path to take from it)"
        )
    return str(path)


@hookimpl
def register_dataset_sources(register):
    register(AtifSource)


@hookimpl
def register_rags(register):
    register(AtifReplayRAG)
