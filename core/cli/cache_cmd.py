"""``ragassay cache``: inspect and clear the LLM response cache (and the dequantised local model weights)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from .common import config_option, console
from .help_text import ListsWholeSentences
from .render import esc


def _locate(config_path: Path) -> tuple[str, Path]:
    """(response cache URL, cache folder) of the config at ``config_path``."""
    from ..config import load_config
    from ..engine.project import Project

    project = Project(load_config(config_path))  # paths only: no plugin is loaded
    return project.llm_cache_url, project.cache_dir


def _exists(url: str) -> bool:
    return not url.startswith("sqlite:///") or Path(url.removeprefix("sqlite:///")).exists()


def _folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


@click.group("cache", cls=ListsWholeSentences)
def cache_group() -> None:
    """The LLM response cache: a re-run of an unchanged config makes no model calls."""


@cache_group.command("stats")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def stats_command(config_path: Path, as_json: bool) -> None:
    """Entries and stored tokens per backend and model, and the size of cached model weights."""
    from ..llm.cache import ResponseCache, display_url

    url, cache_dir = _locate(config_path)
    stats = {"url": display_url(url), "entries": 0, "by_model": []}
    if _exists(url):
        cache = ResponseCache(url)
        try:
            stats = cache.stats()
        finally:
            cache.close()
    stats["model_weights_bytes"] = _folder_size(cache_dir / "models")
    if as_json:
        click.echo(json.dumps(stats, indent=2))
        return
    _print_stats(stats)


def _print_stats(stats: dict) -> None:
    from rich.table import Table

    out = console()
    out.print(f"response cache: {esc(stats['url'])}: {stats['entries']} entries")
    if stats["by_model"]:
        table = Table(show_lines=False)
        for column in ("backend", "model", "entries", "input tokens", "output tokens"):
            table.add_column(column, justify="left" if column in ("backend", "model") else "right")
        for row in stats["by_model"]:
            table.add_row(
                esc(row["backend"]),
                esc(row["model"]),
                str(row["entries"]),
                str(row["input_tokens"]),
                str(row["output_tokens"]),
            )
        out.print(table)
    out.print(f"cached local model weights: {stats['model_weights_bytes'] / 1e6:.1f} MB")


@cache_group.command("clear")
@config_option
@click.option("--backend", default=None, help="Only entries of this backend (openai, anthropic, local, ...).")
@click.option("--model", default=None, help="Only entries of this model.")
@click.option("--models", "weights", is_flag=True, help="Also delete the cached dequantised local model weights.")
def clear_command(config_path: Path, backend: str | None, model: str | None, weights: bool) -> None:
    """Delete cached responses (all, or one backend's / model's), so the next run calls the models again."""
    from ..llm.cache import ResponseCache, display_url

    url, cache_dir = _locate(config_path)
    removed = 0
    if _exists(url):
        cache = ResponseCache(url)
        try:
            removed = cache.clear(backend=backend, model=model)
        finally:
            cache.close()
    click.echo(f"removed {removed} cached response{'s' if removed != 1 else ''} from {display_url(url)}")
    if weights:
        size = _folder_size(cache_dir / "models")
        shutil.rmtree(cache_dir / "models", ignore_errors=True)
        click.echo(f"removed {size / 1e6:.1f} MB of cached model weights from {cache_dir / 'models'}")


COMMANDS = [cache_group]
