"""From config to runnable systems: ``extends`` and grids expanded, names resolved, options validated.

Resolution is pure (no component is instantiated); :func:`build_system` instantiates one resolved system.
"""

from __future__ import annotations

import dataclasses
import itertools
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ValidationError

from ..components import ComponentContext, DerivedMetric, RAGSystem
from ..config import Config, LoadedConfig, SystemSection, format_validation_error
from ..errors import ComponentNotFoundError, ConfigError
from ..models import ComponentSpec, SystemSpec
from ..refs import ComponentRef
from ..registry import ComponentInfo, Registry

DEFAULT_RAG = "naive"


MAX_NESTING = 16


@dataclasses.dataclass
class ResolvedComponent:
    """A registered component with validated options, and the components its options name (resolved too)."""

    info: ComponentInfo
    options: BaseModel
    nested: dict[str, ResolvedComponent] = dataclasses.field(default_factory=dict)

    def spec(self) -> ComponentSpec:
        return ComponentSpec(
            kind=self.info.kind,
            name=self.info.name,
            plugin=self.info.plugin,
            distribution=self.info.distribution,
            version=self.info.version,
            options=self.options.model_dump(mode="json"),
            components={path: part.spec() for path, part in self.nested.items()},
            traits=component_traits(self.info, self.options),
        )

    def build(self, context: ComponentContext, **kwargs: Any):
        return self.info.cls(self.options, context=context, **kwargs)


def component_traits(info: ComponentInfo, options: BaseModel) -> dict[str, Any]:
    """What readers of stored results need to know of a component: a metric's direction and value range, whether
    a judge compares with reference answers, how a RAG system uses retrieval and whether it gives answers."""
    if info.kind == "metric":
        direction, (low, high) = info.cls.declared(options)
        return {"direction": direction, "value_range": [low, high], "derived": issubclass(info.cls, DerivedMetric)}
    if info.kind == "judge":
        return {"direction": "higher", "value_range": [0.0, 1.0], "reference_based": info.cls.reference_based}
    if info.kind == "rag":
        traits: dict[str, Any] = {} if info.cls.retrieval is None else {"retrieval": info.cls.retrieval}
        if not info.cls.answers:  # only then: the specs (and keys) of systems that answer stay as they were
            traits["answers"] = False
        if getattr(info.cls, "replays", False):  # likewise: only replaying systems carry the trait
            traits["replays"] = True
        return traits
    return {}


def nested_refs(value: Any, path: str = "") -> Iterator[tuple[str, ComponentRef]]:
    """Every kind-specific component reference inside validated options, with its option path."""
    if isinstance(value, ComponentRef):
        if value.kind is not None:
            yield path, value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from nested_refs(getattr(value, name), f"{path}.{name}" if path else name)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from nested_refs(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from nested_refs(item, f"{path}.{key}" if path else str(key))


@dataclasses.dataclass
class ResolvedSystem:
    """A system ready to build: its RAG component and its parts by role."""

    name: str
    rag: ResolvedComponent
    parts: dict[str, ResolvedComponent]
    description: str = ""
    #: The system a wrapper system wraps (see :attr:`RAGSystem.wraps`); None for other systems.
    wrapped: ResolvedSystem | None = None

    def spec(self) -> SystemSpec:
        return SystemSpec(name=self.name, rag=self.rag.spec(), parts={role: p.spec() for role, p in self.parts.items()})


def resolve_component(
    registry: Registry, kind: str, ref: ComponentRef, loaded: LoadedConfig, key: str, depth: int = 0
) -> ResolvedComponent:
    """Look up ``ref`` as a ``kind``, validate its options and resolve the components they name, recursively.

    Errors name the key path, down to a nested component's option
    (``systems.h.retriever.options.retrievers[1].options.k1``).
    """
    try:
        info = registry.get(kind, ref.name)
    except ComponentNotFoundError as exc:
        raise ComponentNotFoundError(f"{loaded.where(key)}: {exc}") from None
    try:
        options = info.cls.Options.model_validate(ref.options)
    except ValidationError as exc:
        raise ConfigError(
            format_validation_error(
                exc,
                loaded.path.name,
                loaded.key_prefix,
                base=f"{key}.options" if "." in key else key,
                model=info.cls.Options,
            )
        ) from None
    if depth >= MAX_NESTING:
        raise ConfigError(
            f"{loaded.where(key)}: components nested more than {MAX_NESTING} deep; is a component made of itself?"
        )
    nested = {
        path: resolve_component(registry, part.kind, part, loaded, f"{key}.options.{path}", depth + 1)
        for path, part in nested_refs(options)
    }
    return ResolvedComponent(info, options, nested)


def with_compat(ref: ComponentRef, registry: Registry, compat: str) -> ComponentRef:
    """``ref`` with ``[evaluation] compat`` applied where the reference leaves it unset (so the stored spec
    records the mode in effect): the metric's ``compat`` option, or its ``variant`` option when that has a
    ``"unitxt"`` value (the ``ir_*`` metrics)."""
    if compat == "ragassay":
        return ref
    try:
        info = registry.get("metric", ref.name)
    except ComponentNotFoundError:
        return ref  # resolve_component reports it, with the key path
    fields = info.cls.Options.model_fields
    if "compat" in fields:
        key = "compat"
    elif "variant" in fields and compat in typing.get_args(fields["variant"].annotation):
        key = "variant"
    else:
        return ref
    if key in ref.options:
        return ref
    return ref.model_copy(update={"options": {**ref.options, key: compat}})


def expand_systems(config: Config, loaded: LoadedConfig) -> dict[str, SystemSection]:
    """All systems, with ``extends`` merged and grids expanded (declaration order kept)."""
    merged: dict[str, SystemSection] = {}
    for name in config.systems:
        merged[name] = _merge_chain(name, config.systems, loaded, [])
    for grid_name, grid in config.grid.items():
        if grid.extends not in merged:
            raise ConfigError(
                f"{loaded.where(f'grid.{grid_name}.extends')}: no system named '{grid.extends}'. "
                f"Systems: {', '.join(merged)}"
            )
        keys = list(grid.axes)
        for combo in itertools.product(*(grid.axes[k] for k in keys)):
            label = ",".join(f"{k.removeprefix('options.')}={_label(v)}" for k, v in zip(keys, combo))
            overrides = _grid_overrides(dict(zip(keys, combo)))
            name = f"{grid_name}[{label}]"
            merged[name] = merge_sections(merged[grid.extends], SystemSection.model_validate(overrides))
    return merged


def _label(value: Any) -> str:
    """How a grid alternative appears in a system name: ``bm25``, ``3``, or ``distractors(k=3)`` for a reference
    with options (so that alternatives differing only in options get different names)."""
    if isinstance(value, dict) and "name" in value:
        options = value.get("options") or {}
        inner = ",".join(f"{k}={_label(v)}" for k, v in options.items())
        return f"{value['name']}({inner})" if inner else str(value["name"])
    return str(value)


def _grid_overrides(choice: dict[str, Any]) -> dict[str, Any]:
    overrides: dict[str, Any] = {"options": {}}
    for key, value in choice.items():
        if key.startswith("options."):
            overrides["options"][key.removeprefix("options.")] = value
        else:
            overrides[key] = value
    return overrides


def _merge_chain(name: str, systems: dict[str, SystemSection], loaded: LoadedConfig, seen: list[str]) -> SystemSection:
    section = systems[name]
    if section.extends is None:
        return section
    if section.extends in seen + [name]:
        chain = " -> ".join(seen + [name, section.extends])
        raise ConfigError(f"{loaded.where(f'systems.{name}.extends')}: circular extends ({chain})")
    if section.extends not in systems:
        raise ConfigError(
            f"{loaded.where(f'systems.{name}.extends')}: no system named '{section.extends}'. "
            f"Systems: {', '.join(systems)}"
        )
    parent = _merge_chain(section.extends, systems, loaded, seen + [name])
    return merge_sections(parent, section)


def merge_sections(parent: SystemSection, child: SystemSection) -> SystemSection:
    """Child overrides parent. A part swapped for another component drops the parent's options for it."""
    parts = dict(parent.parts)
    for role, ref in child.parts.items():
        old = parts.get(role)
        if old is not None and old.name == ref.name:
            ref = ComponentRef(name=ref.name, options={**old.options, **ref.options})
        parts[role] = ref
    rag = child.rag or parent.rag
    same_rag = child.rag is None or parent.rag is None or child.rag.name == parent.rag.name
    options = {**parent.options, **child.options} if same_rag else dict(child.options)
    return SystemSection(rag=rag, options=options, parts=parts, description=child.description or parent.description)


def resolve_systems(loaded: LoadedConfig, registry: Registry) -> list[ResolvedSystem]:
    """Resolve every system of the config against the registry (a wrapper after the system it wraps)."""
    sections = expand_systems(loaded.config, loaded)
    done: dict[str, ResolvedSystem] = {}
    for name in sections:
        _resolve_system(name, sections, loaded, registry, done, [])
    return [done[name] for name in sections]


def _resolve_system(
    name: str,
    sections: dict[str, SystemSection],
    loaded: LoadedConfig,
    registry: Registry,
    done: dict[str, ResolvedSystem],
    stack: list[str],
) -> ResolvedSystem:
    if name in done:
        return done[name]
    section, key = sections[name], f"systems.{name}"
    rag_ref = section.rag or ComponentRef(name=DEFAULT_RAG)
    rag = resolve_component(
        registry,
        "rag",
        ComponentRef(name=rag_ref.name, options={**rag_ref.options, **section.options}),
        loaded,
        f"{key}.rag" if section.rag else key,
    )
    if rag.info.cls.wraps is None:
        parts = _resolve_parts(rag, section, loaded.config, registry, loaded, key)
        done[name] = ResolvedSystem(name, rag, parts, section.description)
    else:
        inner = _wrapped_system(name, rag, section, sections, loaded, registry, done, stack)
        done[name] = ResolvedSystem(name, rag, dict(inner.parts), section.description, wrapped=inner)
    return done[name]


def _wrapped_system(
    name: str,
    rag: ResolvedComponent,
    section: SystemSection,
    sections: dict[str, SystemSection],
    loaded: LoadedConfig,
    registry: Registry,
    done: dict[str, ResolvedSystem],
    stack: list[str],
) -> ResolvedSystem:
    """The system that the wrapper system ``name`` wraps, resolved; its RAG spec joins the wrapper's components."""
    option = rag.info.cls.wraps
    where = loaded.where(f"systems.{name}.options.{option}")
    target = getattr(rag.options, option)
    if section.parts:
        raise ConfigError(
            f"{loaded.where(f'systems.{name}')}: rag '{rag.info.name}' wraps the system '{target}' and takes its "
            f"parts; remove {', '.join(sorted(section.parts))} here and set them on '{target}'"
        )
    if target not in sections:
        raise ConfigError(f"{where}: no system named '{target}'. Systems: {', '.join(sections)}")
    if target in stack + [name]:
        raise ConfigError(f"{where}: systems wrap each other ({' -> '.join(stack + [name, target])})")
    inner = _resolve_system(target, sections, loaded, registry, done, stack + [name])
    try:
        rag.info.cls.check_wrapped(inner.rag.info.cls, rag.options)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    rag.nested[option] = inner.rag
    return inner


def _resolve_parts(
    rag: ResolvedComponent, section: SystemSection, config: Config, registry: Registry, loaded: LoadedConfig, key: str
) -> dict[str, ResolvedComponent]:
    roles = rag.info.cls.roles
    for role in section.parts:
        if role not in roles:
            allowed = ", ".join(roles) or "none"
            raise ConfigError(
                f"{loaded.where(f'{key}.{role}')}: rag '{rag.info.name}' has no part '{role}'. "
                f"Its parts: {allowed}; other keys: rag, extends, description, options"
            )
    parts = {}
    for role, spec in roles.items():
        ref = section.parts.get(role) or config.defaults.get(role)
        if ref is None and spec.default is not None:
            ref = ComponentRef(name=spec.default)
        if ref is None:
            if spec.required:
                raise ConfigError(
                    f"{loaded.where(f'{key}.{role}')}: rag '{rag.info.name}' needs a {spec.kind} for '{role}'. "
                    f"Installed: {', '.join(i.name for i in registry.of_kind(spec.kind)) or 'none'}"
                )
            continue
        parts[role] = resolve_component(registry, spec.kind, ref, loaded, f"{key}.{role}")
    return parts


def build_system(system: ResolvedSystem, context: ComponentContext) -> RAGSystem:
    """Instantiate a resolved system and its parts.

    A wrapper gets no parts of its own: its :attr:`RAGSystem.wrapped` system is built once per process and
    shared by every wrapper of the same system (``context.shared``, keyed by the wrapped system's spec).
    """
    if system.wrapped is None:
        parts = {role: part.build(context) for role, part in system.parts.items()}
        return system.rag.build(context, parts=parts)
    inner = system.wrapped
    rag = system.rag.build(context, parts={})
    rag.wrapped = context.shared(
        ("wrapped system", inner.spec().model_dump_json()), lambda: build_system(inner, context)
    )
    return rag
