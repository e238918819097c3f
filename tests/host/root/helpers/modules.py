"""Stand-in for helpers/modules.py: load a .py file as a fresh module object that is
NOT registered in sys.modules, pick classes from it, and purge module namespaces."""
import importlib
import importlib.util
import inspect
import os
import sys
from fnmatch import fnmatch
from types import ModuleType
from typing import Type, TypeVar

from helpers.files import get_abs_path

T = TypeVar("T")


def import_module(file_path: str) -> ModuleType:
    path = get_abs_path(file_path)
    # the module is named after the file (without .py) and executed from scratch each time
    name = os.path.basename(path).replace(".py", "")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"Could not load module from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pick_classes(module: ModuleType, base_class: type, one_per_file: bool) -> list:
    picked = []
    # getmembers is sorted by attribute name; walking it backwards means the
    # alphabetically LAST subclass wins, imported ones included
    for _name, cls in reversed(inspect.getmembers(module, inspect.isclass)):
        if cls is not base_class and issubclass(cls, base_class):
            picked.append(cls)
            if one_per_file:
                break
    return picked


def load_classes_from_file(file: str, base_class: type[T], one_per_file: bool = True) -> list[type[T]]:
    return _pick_classes(import_module(file), base_class, one_per_file)


def load_classes_from_folder(folder: str, name_pattern: str, base_class: Type[T],
                             one_per_file: bool = True) -> list[Type[T]]:
    directory = get_abs_path(folder)
    names = sorted(n for n in os.listdir(directory)
                   if fnmatch(n, name_pattern) and n.endswith(".py"))
    classes: list[Type[T]] = []
    for name in names:
        classes.extend(_pick_classes(import_module(os.path.join(directory, name)),
                                     base_class, one_per_file))
    return classes


def purge_namespace(namespace: str) -> list[str]:
    doomed = [n for n in sys.modules if n == namespace or n.startswith(namespace + ".")]
    doomed.sort(key=lambda n: n.count("."), reverse=True)
    for name in doomed:
        del sys.modules[name]
    importlib.invalidate_caches()
    return doomed
