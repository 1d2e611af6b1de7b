"""Download, verify and unpack the pinned PJRT plugin wheels.

Usage: install_plugins.py PLUGINS_TOML DEST_DIR [--find-links DIR]

--find-links DIR takes wheels from DIR only (no index), as the tests do.

Each [[plugin]] of PLUGINS_TOML is fetched with `pip download --no-deps`,
its SHA-256 compared with the pin (a mismatch stops with a clear message and
leaves nothing installed), and the wheel unpacked into
DEST_DIR/<name>-<version>/. A plugin already unpacked with a matching
`.oxla-sha256` stamp is skipped, so a second run is quick.
"""

import hashlib
import pathlib
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile


def sha256_of(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def install(plugin: dict, dest_root: pathlib.Path, find_links: str | None = None) -> None:
    name, version, pin = plugin["name"], plugin["version"], plugin["sha256"]
    dest = dest_root / f"{name}-{version}"
    stamp = dest / ".oxla-sha256"
    if stamp.is_file() and stamp.read_text().strip() == pin and (dest / plugin["library"]).is_file():
        print(f"ci/setup: plugin {name} {version} present at {dest}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        source = ["--no-index", "--find-links", find_links] if find_links else []
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps",
             "--disable-pip-version-check", *source, "-d", tmp, f"{name}=={version}"],
            check=True,
        )
        wheels = list(pathlib.Path(tmp).glob("*.whl"))
        if len(wheels) != 1:
            sys.exit(f"ci/setup: expected one wheel for {name}=={version}, got {wheels}")
        got = sha256_of(wheels[0])
        if got != pin:
            sys.exit(
                f"ci/setup: CHECKSUM MISMATCH for {wheels[0].name}\n"
                f"  pinned in third_party/plugins.toml: {pin}\n"
                f"  downloaded:                         {got}\n"
                f"  refusing to install it."
            )
        staging = dest_root / f".{name}-{version}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        with zipfile.ZipFile(wheels[0]) as zf:
            zf.extractall(staging)
        (staging / ".oxla-sha256").write_text(pin + "\n")
        shutil.rmtree(dest, ignore_errors=True)
        staging.rename(dest)
    print(f"ci/setup: installed plugin {name} {version} at {dest}")


def parse_args(option: str) -> tuple[pathlib.Path, pathlib.Path, str | None]:
    """MANIFEST DEST_DIR [OPTION VALUE] from the command line: the two paths
    and the option's value (None when absent)."""
    args = sys.argv[1:]
    value = None
    if option in args:
        at = args.index(option)
        value = args[at + 1]
        del args[at:at + 2]
    return pathlib.Path(args[0]), pathlib.Path(args[1]), value


def main() -> None:
    manifest, dest_root, find_links = parse_args("--find-links")
    dest_root.mkdir(parents=True, exist_ok=True)
    for plugin in tomllib.loads(manifest.read_text())["plugin"]:
        install(plugin, dest_root, find_links)


if __name__ == "__main__":
    main()
