"""Tests of ci/install_plugins.py with locally built wheels (no network):
a wrong pin stops with a clear message and installs nothing; a right pin
installs; a second run only checks; a plugin's required library wheels are
checked the same way and unpacked into the plugin's directory."""

import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest
import zipfile

SCRIPT = pathlib.Path(__file__).with_name("install_plugins.py")


def make_wheel(directory: pathlib.Path, name: str = "fake-pjrt-plugin",
               member: str = "fake_pjrt_plugin/plugin.so") -> pathlib.Path:
    """A wheel of `name` 1.0 holding one file, `member`."""
    module = name.replace("-", "_")
    wheel = directory / f"{module}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        executable = zipfile.ZipInfo(member)
        executable.external_attr = 0o755 << 16
        zf.writestr(executable, b"\x7fELF not really")
        zf.writestr(f"{module}-1.0.dist-info/METADATA",
                    f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        zf.writestr(f"{module}-1.0.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{module}-1.0.dist-info/RECORD", "")
    return wheel


def sha_of(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest(directory: pathlib.Path, sha: str, library_sha: str | None = None) -> pathlib.Path:
    """A manifest of the fake plugin; with `library_sha`, the plugin requires
    the fake NVIDIA library wheel pinned to it."""
    path = directory / "plugins.toml"
    text = ('[[plugin]]\nname = "fake-pjrt-plugin"\nversion = "1.0"\nplatform = "cpu"\n'
            f'sha256 = "{sha}"\nlibrary = "fake_pjrt_plugin/plugin.so"\n')
    if library_sha is not None:
        text += ('requires = ["nvidia-fake-cu12"]\n\n[[wheel]]\nname = "nvidia-fake-cu12"\n'
                 f'version = "1.0"\nsha256 = "{library_sha}"\n')
    path.write_text(text)
    return path

LIBRARY_MEMBER = "nvidia/fake/lib/libfake.so.12"


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
        self.sha = sha_of(make_wheel(self.links))
        self.library_sha = sha_of(make_wheel(self.links, "nvidia-fake-cu12", LIBRARY_MEMBER))
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

    def test_required_library_wheels_land_in_the_plugins_directory(self):
        m = manifest(self.root, self.sha, self.library_sha)
        first = run(m, self.dest, self.links)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertIn("with 1 library wheels", first.stdout)
        installed = self.dest / "fake-pjrt-plugin-1.0"
        self.assertTrue((installed / "fake_pjrt_plugin/plugin.so").is_file())
        self.assertTrue((installed / LIBRARY_MEMBER).is_file())
        self.assertTrue(os.access(installed / LIBRARY_MEMBER, os.X_OK), "executable bit lost")
        second = run(m, self.dest, self.links)
        self.assertIn("present", second.stdout)

    def test_a_wrong_library_pin_installs_nothing(self):
        wrong = "1" * 64
        result = run(manifest(self.root, self.sha, wrong), self.dest, self.links)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("CHECKSUM MISMATCH", result.stderr)
        self.assertIn(wrong, result.stderr)
        self.assertFalse((self.dest / "fake-pjrt-plugin-1.0").exists())

    def test_a_required_wheel_without_an_entry_is_named(self):
        m = manifest(self.root, self.sha)
        m.write_text(m.read_text() + 'requires = ["nvidia-absent-cu12"]\n')
        result = run(m, self.dest, self.links)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("nvidia-absent-cu12", result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    def test_a_broken_manifest_is_one_line_not_a_traceback(self):
        broken = self.root / "broken.toml"
        broken.write_text("[[plugin]\nname = ")
        result = run(broken, self.dest, self.links)
        self.assertNotEqual(result.returncode, 0)
        self.assertNotIn("Traceback", result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertIn("install_plugins.py failed", result.stderr)


if __name__ == "__main__":
    unittest.main()
