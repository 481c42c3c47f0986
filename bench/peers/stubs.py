"""Stand-ins for the peers' optional imports that Debian does not package and PyPI does not reach here.

A stubbed module imports, and anything taken from it is a placeholder that raises when used: a generator
that really needs one fails when it is built or called, and the measurement leaves it out and counts it.
"""
import importlib.abc
import importlib.machinery
import sys
import types


class _Missing:
    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        raise ImportError(f"{self._name} is a stub (not installed on this machine)")

    def __getattr__(self, attr):
        return _Missing(f"{self._name}.{attr}")

    def __mro_entries__(self, bases):
        return (object,)


class _StubModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Missing(f"{self.__name__}.{attr}")


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, roots):
        self.roots = set(roots)

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] not in self.roots:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def install(roots):
    """Stubs the top-level modules in `roots` that cannot be imported for real."""
    missing = []
    for root in roots:
        try:
            __import__(root)
        except ImportError:
            missing.append(root)
    sys.meta_path.append(_StubFinder(missing))
    return missing
