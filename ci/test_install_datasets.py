"""Tests of ci/install_datasets.py with locally built archives (no network):
a wrong archive pin or member pin stops with one clear line and installs
nothing; right pins install the members under their names (from a zip and a
tar.gz); a second run only checks."""

import hashlib
import io
import pathlib
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

SCRIPT = pathlib.Path(__file__).with_name("install_datasets.py")
PAYLOAD = b"\x00\x00\x08\x01\x00\x00\x00\x02\x07\x03"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_zip(directory: pathlib.Path) -> pathlib.Path:
    path = directory / "digits-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("digits-1.0/labels.idx1-ubyte", PAYLOAD)
    return path


def make_tar(directory: pathlib.Path) -> pathlib.Path:
    path = directory / "texts-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        info = tarfile.TarInfo("texts-1.0/play.txt")
        info.size = len(PAYLOAD)
        tf.addfile(info, io.BytesIO(PAYLOAD))
    return path


def manifest(directory: pathlib.Path, archive: pathlib.Path, archive_sha: str,
             member: str, member_sha: str) -> pathlib.Path:
    path = directory / "datasets.toml"
    path.write_text(
        f'[[dataset]]\nname = "toy"\npackage = "toy 1.0"\n'
        f'url = "https://files.example.invalid/p/{archive.name}"\nsha256 = "{archive_sha}"\n'
        f'files = [{{ member = "{member}", name = "data.bin", sha256 = "{member_sha}" }}]\n')
    return path


def run(manifest_path, dest, source):
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(manifest_path), str(dest), "--from", str(source)],
        capture_output=True, text=True)


class InstallDatasets(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        self.source = self.root / "archives"
        self.source.mkdir()
        self.dest = self.root / "datasets"

    def tearDown(self):
        self.tmp.cleanup()

    def test_wrong_archive_checksum_stops_with_one_line(self):
        archive = make_zip(self.source)
        wrong = "0" * 64
        m = manifest(self.root, archive, wrong, "digits-1.0/labels.idx1-ubyte", sha(PAYLOAD))
        result = run(m, self.dest, self.source)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("CHECKSUM MISMATCH", result.stderr)
        self.assertIn(wrong, result.stderr)
        self.assertIn(sha(archive.read_bytes()), result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertFalse((self.dest / "toy").exists())

    def test_wrong_member_checksum_installs_nothing(self):
        archive = make_tar(self.source)
        m = manifest(self.root, archive, sha(archive.read_bytes()), "texts-1.0/play.txt", "1" * 64)
        result = run(m, self.dest, self.source)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("CHECKSUM MISMATCH for texts-1.0/play.txt", result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertFalse((self.dest / "toy").exists())

    def test_missing_member_is_one_line(self):
        archive = make_zip(self.source)
        m = manifest(self.root, archive, sha(archive.read_bytes()), "nope.bin", sha(PAYLOAD))
        result = run(m, self.dest, self.source)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("has no member nope.bin", result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    def test_right_checksums_install_then_only_check(self):
        for archive, member in [(make_zip(self.source), "digits-1.0/labels.idx1-ubyte"),
                                (make_tar(self.source), "texts-1.0/play.txt")]:
            m = manifest(self.root, archive, sha(archive.read_bytes()), member, sha(PAYLOAD))
            first = run(m, self.dest / archive.name, self.source)
            self.assertEqual(first.returncode, 0, first.stderr)
            self.assertIn("installed dataset toy (toy 1.0)", first.stdout)
            self.assertEqual((self.dest / archive.name / "toy/data.bin").read_bytes(), PAYLOAD)
            second = run(m, self.dest / archive.name, self.source)
            self.assertEqual(second.returncode, 0, second.stderr)
            self.assertIn("present", second.stdout)


if __name__ == "__main__":
    unittest.main()
