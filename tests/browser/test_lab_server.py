"""``lab_server`` (tests/lab_server.py): the server the browser tests use starts, answers, and leaves nothing behind."""

from __future__ import annotations

import os
import sys
import time
import urllib.error

import pytest
from lab_server import LabServer, isolated_env, lab_argv, start_lab

pytest.importorskip("jupyterlab")
psutil = pytest.importorskip("psutil")


def test_lab_argv_names_port_token_root_and_notebook():
    argv = lab_argv(python="py", port=8123, token="secret", root_dir="/srv/course", notebook="course/a.ipynb",
                    expose_app=True)
    assert "--ServerApp.port=8123" in argv and "--IdentityProvider.token=secret" in argv
    assert "--ServerApp.root_dir=/srv/course" in argv and "--LabApp.expose_app_in_browser=True" in argv
    assert argv[-1] == "course/a.ipynb"
    assert ("--allow-root" in argv) == (os.geteuid() == 0)


@pytest.mark.timeout(180)
def test_lab_server_stops_with_its_kernels(tmp_path):
    server = start_lab(tmp_path, python=sys.executable, env=isolated_env(tmp_path), log_path=tmp_path / "lab.log")
    try:
        assert "started" in server.api("api/status")
        with pytest.raises(urllib.error.HTTPError):  # the token is what lets us in
            LabServer(server.process, server.url, "wrong-token", server.root_dir, server.log_path).api("api/kernels")
        kernel = server.api("api/kernels", method="POST")
        deadline = time.monotonic() + 60
        while not (children := psutil.Process(server.process.pid).children(recursive=True)):
            assert time.monotonic() < deadline, "the kernel process never appeared"
            time.sleep(0.2)
        assert kernel["id"] in [k["id"] for k in server.api("api/kernels")]
    finally:
        server.stop()
    assert server.process.poll() is not None, "the server is still running"
    _, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, f"left behind: {[p.pid for p in alive]}"
    server.stop()  # a second stop is harmless
