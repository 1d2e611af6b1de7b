"""Tests of ci/install_plugins.py with a locally built wheel (no network):
a wrong pin stops with a clear message and installs nothing; a right pin
installs; a second run only checks."""

import hashlib
import pathlib
import subprocess
import sys
import tempfile
import unittest
import zipfile

SCRIPT = pathlib.Path(__file__).with_name("install_plugins.py")


def make_wheel(directory: pathlib.Path) -> pathlib.Path:
    wheel = directory / "fake_pjrt_plugin-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("fake_pjrt_plugin/plugin.so", b"\x7fELF not really")
        zf.writestr("fake_pjrt_plugin-1.0.dist-info/METADATA",
                    "Metadata-Version: 2.1\nName: fake-pjrt-plugin\nVersion: 1.0\n")
        zf.writestr("fake_pjrt_plugin-1.0.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr("fake_pjrt_plugin-1.0.dist-info/RECORD", "")
    return wheel


def manifest(directory: pathlib.Path, sha: str) -> pathlib.Path:
    path = directory / "plugins.toml"
    path.write_text(
        '[[plugin]]\nname = "fake-pjrt-plugin"\nversion = "1.0"\nplatform = "cpu"\n'
        f'sha256 = "{sha}"\nlibrary = "fake_pjrt_plugin/plugin.so"\n')
    return path


def run(manifest_path, dest, links):
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(manifest_path), str(dest), "--find-links", str(links)],
        capture_output=True, text=True)


class InstallPlugins(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        self.links = self.root / "wheels"
        self.links.mkdir()
        self.sha = hashlib.sha256(make_wheel(self.links).read_bytes()).hexdigest()
        self.dest = self.root / "plugins"

    def tearDown(self):
        self.tmp.cleanup()

    def test_wrong_checksum_stops_with_a_clear_message(self):
        wrong = "0" * 64
        result = run(manifest(self.root, wrong), self.dest, self.links)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("CHECKSUM MISMATCH", result.stderr)
        self.assertIn(wrong, result.stderr)
        self.assertIn(self.sha, result.stderr)
        self.assertFalse((self.dest / "fake-pjrt-plugin-1.0").exists())

    def test_right_checksum_installs_then_only_checks(self):
        m = manifest(self.root, self.sha)
        first = run(m, self.dest, self.links)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertIn("installed plugin fake-pjrt-plugin 1.0", first.stdout)
        self.assertTrue((self.dest / "fake-pjrt-plugin-1.0/fake_pjrt_plugin/plugin.so").is_file())
        second = run(m, self.dest, self.links)
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn("present", second.stdout)


if __name__ == "__main__":
    unittest.main()
