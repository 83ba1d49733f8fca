"""The CLI starts where the ``signal`` module has only Windows' names.

Windows' ``signal`` has SIGABRT, SIGFPE, SIGILL, SIGINT, SIGSEGV, SIGTERM and SIGBREAK, and none of
SIGBUS, SIGKILL, SIGHUP, SIGALRM, ``setitimer`` or ``pthread_kill``. A module-level ``signal.SIGBUS``
in ``robojudge.run`` once ended every command there, ``--help`` included, with an AttributeError. The
child process below deletes the other names before robojudge is imported, as a Windows interpreter
would lack them, then runs the CLI and asks how a terminated worker ended.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import contextlib, io, json, signal, sys
    WINDOWS = {"SIGABRT", "SIGFPE", "SIGILL", "SIGINT", "SIGSEGV", "SIGTERM", "SIGBREAK"}
    for name in [n for n in dir(signal) if n.startswith("SIG") and not n.startswith(("SIG_", "SIGRT"))]:
        if name not in WINDOWS:
            delattr(signal, name)
    for name in ("setitimer", "getitimer", "ITIMER_REAL", "pthread_kill", "alarm"):
        if hasattr(signal, name):
            delattr(signal, name)

    def cli(*args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                main(list(args))
                code = 0
            except SystemExit as exc:
                code = exc.code or 0
        return code, out.getvalue()

    if __name__ == "__main__":
        import multiprocessing, time
        from concurrent.futures import ProcessPoolExecutor
        from robojudge.cli import main
        from robojudge.run import score_suite  # noqa: F401 (the Python API imports the same module)
        from robojudge.run._executor import how_it_died

        said = {"help": cli("--help"), "score help": cli("score", "--help")}
        # A worker ended by terminate(): on Windows its exit code is -SIGTERM too, and how_it_died then
        # compared it with signal.SIGKILL.
        proc = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(60,))
        proc.start()
        proc.terminate()
        proc.join(30)
        said["died"] = how_it_died(ProcessPoolExecutor(1), [proc])
        print(json.dumps(said))
    """
)


def test_cli_starts_with_only_windows_signal_names(tmp_path) -> None:
    script = tmp_path / "windows_signals.py"
    script.write_text(SCRIPT, encoding="utf-8")
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    said = json.loads(res.stdout.strip().splitlines()[-1])
    for what in ("help", "score help"):
        code, text = said[what]
        assert code == 0 and "Usage" in text, (what, text[-1000:])
    assert said["died"] == "killed by SIGTERM"
