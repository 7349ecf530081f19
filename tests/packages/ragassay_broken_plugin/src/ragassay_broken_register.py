"""This plugin imports fine but registers something that is not a component."""

from ragassay import hookimpl


@hookimpl
def register_retrievers(register):
    register(dict)
