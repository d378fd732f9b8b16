"""The ``shuffle-acct`` command-line interface.

One click group. Core commands are imported lazily (so ``--version`` and ``--help`` stay
fast); plug-in command groups are discovered through the entry-point group
``shuffle_accountant.plugins``, the same way a third party's plug-in would be.

Exit codes: 0 success, 1 a result could not be certified, 2 bad usage or bad input,
3 a regression check failed.
"""

from __future__ import annotations

import importlib
import sys
from importlib.metadata import entry_points
from typing import Any

import click

from .._version import __version__
from ..errors import CertificationError, InvalidParameter

PLUGIN_GROUP = "shuffle_accountant.plugins"

# click >= 8.2 raises this for a bare group invocation; older versions print help themselves.
_NO_ARGS_IS_HELP: type[BaseException] = getattr(click.exceptions, "NoArgsIsHelpError", ())  # type: ignore[assignment]

#: Core commands: name -> "module:attribute" (relative to this package).
CORE_COMMANDS: dict[str, str] = {
    "epsilon": ".amplification:epsilon_cmd",
    "delta": ".amplification:delta_cmd",
    "methods": ".amplification:methods_cmd",
    "renyi": ".composition:renyi_cmd",
    "compose": ".composition:compose_cmd",
    "table": ".tables:table_cmd",
    "check": ".tables:check_cmd",
    "plot": ".tables:plot_cmd",
    "solve": ".planning:solve_group",
}


def plugin_entry_points() -> dict[str, Any]:
    """The registered plug-in entry points, by command name."""
    return {ep.name: ep for ep in entry_points(group=PLUGIN_GROUP)}


class ShuffleGroup(click.Group):
    """A group that loads core commands and plug-ins on demand and turns every
    expected failure into one line on stderr with the documented exit code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(CORE_COMMANDS) | set(plugin_entry_points()) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name in CORE_COMMANDS:
            module, attr = CORE_COMMANDS[cmd_name].split(":")
            return getattr(importlib.import_module(module, __name__), attr)
        ep = plugin_entry_points().get(cmd_name)
        if ep is None:
            return None
        try:
            command = ep.load()
        except Exception as exc:  # a broken third-party plug-in must not break the tool
            click.echo(f"shuffle-acct: warning: plug-in {cmd_name!r} failed to load: {exc}", err=True)
            return None
        return command

    def main(self, args: Any = None, prog_name: str | None = None, **extra: Any) -> Any:  # type: ignore[override]
        extra.pop("standalone_mode", None)
        try:
            rv = super().main(args=args, prog_name=prog_name, standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except _NO_ARGS_IS_HELP as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(2)
        except click.UsageError as exc:
            hint = f" (try '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            click.echo(f"Error: {exc.format_message()}{hint}", err=True)
            sys.exit(2)
        except click.ClickException as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except InvalidParameter as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(2)
        except CertificationError as exc:
            click.echo(f"Error: could not certify the result: {exc}", err=True)
            sys.exit(1)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(1)
        except BrokenPipeError:
            sys.exit(0)
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
    2 bad input, 3 regression check failed.
    """
