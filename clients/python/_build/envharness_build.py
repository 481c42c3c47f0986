"""A PEP 517/660 build backend in the standard library: builds the pure-Python wheel (and sdist) of envharness-client.

It exists so that ``pip install ./clients/python`` needs nothing from a package index: pip's isolated build
environment has nothing to install (``requires = []``). It reads ``name``/``version``/``description``/
``requires-python`` from pyproject.toml and packs ``envharness_client/`` (with ``py.typed``).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "envharness_client"


def _project() -> Dict[str, str]:
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("[project]", 1)[1].split("\n[", 1)[0]
    out: Dict[str, str] = {}
    for key in ("name", "version", "description", "requires-python"):
        match = re.search(rf'^{re.escape(key)}\s*=\s*"([^"]*)"', section, re.M)
        if match is None:
            raise RuntimeError(f"pyproject.toml: [project] {key} is missing")
        out[key] = match.group(1)
    return out


def _dist_name(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _metadata() -> str:
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}", f"Summary: {p['description']}",
             f"Requires-Python: {p['requires-python']}", "License: MIT", "Classifier: Typing :: Typed"]
    readme = os.path.join(ROOT, "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _package_files() -> List[Tuple[str, str]]:
    files = []
    base = os.path.join(ROOT, PACKAGE)
    for directory, dirs, names in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith((".py", ".typed")):
                full = os.path.join(directory, name)
                files.append((full, os.path.relpath(full, ROOT).replace(os.sep, "/")))
    return files


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, entries: List[Tuple[str, bytes]]) -> str:
    p = _project()
    dist = _dist_name(p["name"])
    info = f"{dist}-{p['version']}.dist-info"
    filename = f"{dist}-{p['version']}-py3-none-any.whl"
    wheel = "Wheel-Version: 1.0\nGenerator: envharness_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries = entries + [(f"{info}/METADATA", _metadata().encode()), (f"{info}/WHEEL", wheel.encode()),
                         (f"{info}/top_level.txt", f"{PACKAGE}\n".encode())]
    record = [_record_line(name, data) for name, data in entries] + [f"{info}/RECORD,,"]
    path = os.path.join(wheel_directory, filename)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
        z.writestr(zipfile.ZipInfo(f"{info}/RECORD", date_time=(2020, 1, 1, 0, 0, 0)), "\n".join(record) + "\n")
    return filename


# ---- PEP 517 hooks -------------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    entries = []
    for full, arcname in _package_files():
        with open(full, "rb") as f:
            entries.append((arcname, f.read()))
    return _write_wheel(wheel_directory, entries)


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    """PEP 660: a wheel holding one .pth file that puts this directory on sys.path."""
    return _write_wheel(wheel_directory, [("envharness_client_editable.pth", (ROOT + "\n").encode())])


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    p = _project()
    base = f"{_dist_name(p['name'])}-{p['version']}"
    path = os.path.join(sdist_directory, f"{base}.tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        names = [os.path.join(ROOT, n) for n in ("pyproject.toml", "README.md")]
        names += [os.path.join(ROOT, "_build", "envharness_build.py")] + [full for full, _ in _package_files()]
        for full in names:
            if os.path.exists(full):
                tar.add(full, arcname=f"{base}/{os.path.relpath(full, ROOT)}")
        pkg_info = _metadata().encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        tar.addfile(info, io.BytesIO(pkg_info))
    return os.path.basename(path)
