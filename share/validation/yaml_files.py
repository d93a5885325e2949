"""Reading and writing the YAML files the validation scripts touch (systems, architectures, run
configs) with a YAML library (python3-yaml), as phaze reads them: numbers in YAML 1.2's form, so
`1410e6` is a float (PyYAML's YAML 1.1 resolver would read it as a string)."""

import re

import yaml


class Loader(yaml.SafeLoader):
    """SafeLoader whose floats are YAML 1.2's (an exponent needs no decimal point)."""


Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                    |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."))


def load(path):
    """The document in PATH."""
    with open(path) as f:
        return yaml.load(f, Loader=Loader)


def dump(document, path):
    """Writes DOCUMENT to PATH, keys in their order."""
    with open(path, "w") as f:
        yaml.safe_dump(document, f, sort_keys=False, default_flow_style=None)


def flow_map(mapping):
    """One flow map, "{k: v, …}", with floats as Python's shortest round-trip text."""
    return "{%s}" % ", ".join("%s: %s" % (k, repr(v) if isinstance(v, float) else v)
                              for k, v in mapping.items())
