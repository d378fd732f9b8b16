"""The ``shuffle-acct`` command-line interface.

One click group. Core commands are imported lazily and plug-in command groups are
discovered through the entry-point group ``shuffle_accountant.plugins`` (the same way a
third party's plug-in would be) and imported only when invoked: ``--version`` and the
group's ``--help`` import neither numpy nor any plug-in.

Exit codes: 0 success, 1 a result could not be certified (overflow, range, too large to
finish), 2 bad usage or bad input, 3 a regression check failed, 4 an internal error (a
bug: one line on stderr; ``SHUFFLE_ACCT_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import click

from .._version import __version__
from ..errors import CertificationError, InvalidParameter

PLUGIN_GROUP = "shuffle_accountant.plugins"
#: Exit code of an unexpected internal error (a bug).
EXIT_INTERNAL = 4

# click >= 8.2 raises this for a bare group invocation; older versions print help themselves.
_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())

#: Core commands: name -> ("module:attribute" relative to this package, short help).
#: The short help is written here so that ``shuffle-acct --help`` need not import them.
CORE_COMMANDS: dict[str, tuple[str, str]] = {
    "epsilon": (".amplification:epsilon_cmd", "Central epsilon of n shuffled eps0-DP reports, at a given delta."),
    "delta": (".amplification:delta_cmd", "Delta at which n shuffled eps0-DP reports are (eps, delta)-DP."),
    "methods": (".amplification:methods_cmd", "List the analyses, what each assumes, and its citation."),
    "renyi": (".composition:renyi_cmd", "RDP curve alpha -> D_alpha of one shuffled round."),
    "compose": (".composition:compose_cmd", "(eps, delta) after T adaptive shuffled rounds, by every route."),
    "table": (".tables:table_cmd", "Evaluate methods over a grid and print a bound table."),
    "check": (".tables:check_cmd", "Recompute a saved table and compare it (exit 3 on a difference)."),
    "plot": (".tables:plot_cmd", "Plot epsilon against n or eps0 (needs the [plot] extra)."),
    "solve": (".planning:solve_group", "Planning: the largest eps0 or the smallest n meeting a target."),
    "frequency": (".accuracy:frequency_cmd", "Frequency estimation: central epsilon and estimation error, or n for a target error."),
}


def plugin_entry_points() -> dict[str, EntryPoint]:
    """The registered plug-in entry points, by command name."""
    return {ep.name: ep for ep in entry_points(group=PLUGIN_GROUP)}


def _plugin_short_help(ep: EntryPoint) -> str:
    """A plug-in's line in the group's help, from its metadata only (no import)."""
    dist = getattr(ep, "dist", None)
    origin = f"{dist.name} {dist.version}" if dist is not None else ep.value.split(":")[0]
    return f"Plug-in command group (from {origin}); see 'shuffle-acct {ep.name} --help'."


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


class Heartbeat:
    """An elapsed-time line on an interactive stderr while a command runs longer than
    ``after`` seconds, so that a long computation is never silent; commands that draw
    their own progress bar call :meth:`pause`. Nothing is written when stderr is not a
    terminal (pipes and logs stay clean)."""

    active: Heartbeat | None = None

    def __init__(self, after: float = 3.0, every: float = 1.0) -> None:
        self.after, self.every = after, every
        self._stop = threading.Event()
        self._paused = False
        self._shown = False
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Heartbeat:  # noqa: PYI034 - typing.Self needs Python 3.11
        if sys.stderr.isatty():
            Heartbeat.active = self
            self._start = time.monotonic()
            self._thread.start()
        return self

    def _run(self) -> None:
        if self._stop.wait(self.after):
            return
        while not self._stop.is_set():
            if not self._paused:
                sys.stderr.write(f"\rshuffle-acct: working... {time.monotonic() - self._start:.0f} s ")
                sys.stderr.flush()
                self._shown = True
            self._stop.wait(self.every)

    def pause(self) -> None:
        """Stop drawing (a progress bar takes over the line)."""
        self._paused = True
        self._clear()

    def _clear(self) -> None:
        if self._shown:
            sys.stderr.write("\r" + " " * 40 + "\r")
            sys.stderr.flush()
            self._shown = False

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)
        self._clear()
        Heartbeat.active = None


class ShuffleGroup(click.Group):
    """A group that loads core commands and plug-ins on demand and turns every
    expected failure into one line on stderr with the documented exit code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(CORE_COMMANDS) | set(plugin_entry_points()) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name in CORE_COMMANDS:
            module, attr = CORE_COMMANDS[cmd_name][0].split(":")
            command: click.Command = getattr(importlib.import_module(module, __name__), attr)
            return command
        ep = plugin_entry_points().get(cmd_name)
        if ep is None:
            return None
        try:
            loaded: click.Command = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken third-party plug-in must not break the tool
            click.echo(f"shuffle-acct: warning: plug-in {cmd_name!r} failed to load: {_one_line(exc)}", err=True)
            return None
        return loaded

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list, from :data:`CORE_COMMANDS` and the entry-point names: nothing
        is imported to print the group's help."""
        plugins = plugin_entry_points()
        core = [(name, CORE_COMMANDS[name][1]) for name in sorted(CORE_COMMANDS)]
        extra = [(name, _plugin_short_help(plugins[name])) for name in sorted(plugins) if name not in CORE_COMMANDS]
        with formatter.section("Commands"):
            formatter.write_dl(core)
        if extra:
            with formatter.section("Plug-in commands"):
                formatter.write_dl(extra)

    def main(self, args: Any = None, prog_name: str | None = None, **extra: Any) -> Any:  # type: ignore[override]
        extra.pop("standalone_mode", None)
        try:
            with Heartbeat():
                rv = super().main(args=args, prog_name=prog_name, standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except _NO_ARGS_IS_HELP as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(2)
        except click.UsageError as exc:
            hint = f" (try '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            click.echo(f"Error: {_one_line(exc.format_message())}{hint}", err=True)
            sys.exit(2)
        except click.ClickException as exc:
            click.echo(f"Error: {_one_line(exc.format_message())}", err=True)
            sys.exit(exc.exit_code)
        except InvalidParameter as exc:
            click.echo(f"Error: {_one_line(exc)}", err=True)
            sys.exit(2)
        except CertificationError as exc:
            click.echo(f"Error: could not certify the result: {_one_line(exc)}", err=True)
            sys.exit(1)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(1)
        except BrokenPipeError:
            sys.exit(0)
        except (OverflowError, FloatingPointError, MemoryError, RecursionError) as exc:
            if os.environ.get("SHUFFLE_ACCT_DEBUG"):
                raise
            what = "out of memory" if isinstance(exc, MemoryError) else "floating-point range exceeded"
            click.echo(f"Error: could not certify the result: {what} ({type(exc).__name__}: {_one_line(exc)[:200]})",
                       err=True)
            sys.exit(1)
        except Exception as exc:  # a bug: one line, a distinct exit code, the traceback on request
            if os.environ.get("SHUFFLE_ACCT_DEBUG"):
                raise
            click.echo(f"Error: internal error, please report it with the command line "
                       f"({type(exc).__name__}: {_one_line(exc)[:200]}; SHUFFLE_ACCT_DEBUG=1 shows the traceback)",
                       err=True)
            sys.exit(EXIT_INTERNAL)
        if isinstance(rv, int) and rv != 0:
            sys.exit(rv)
        return None


@click.group(cls=ShuffleGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="shuffle-acct")
def main() -> None:
    """Certified privacy accounting for shuffle-model differential privacy.

    \b
    Examples:
      shuffle-acct epsilon --eps0 3 --n 10000
      shuffle-acct delta --eps0 3 --n 10000 --eps 0.5
      shuffle-acct methods

    Every number is labelled upper (certified), lower (attained by a concrete
    mechanism), exact, or estimate. Exit codes: 0 ok, 1 not certifiable,
    2 bad input, 3 regression check failed, 4 internal error.
    """
