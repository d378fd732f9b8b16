"""The JSON schema of every ``--format json`` document ``shuffle-acct`` prints.

The schema ships with the package (``output-1.schema.json``, JSON Schema draft 2020-12)
so that a consumer can validate what it reads, as pyhf does with its workspace schemas::

    >>> import jsonschema                                    # doctest: +SKIP
    >>> jsonschema.validate(doc, load_schema())              # doctest: +SKIP

``SCHEMA_VERSION`` is written into every document; it changes when the envelope changes
(major: a field removed or changed in meaning; minor: a field added).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: Version of the envelope every JSON document carries (``schema_version``).
SCHEMA_VERSION = "1.0"
#: File name of the schema inside this package.
SCHEMA_FILE = "output-1.schema.json"


def load_schema() -> dict[str, Any]:
    """The JSON schema (a dict) of the output envelope, read from the package data."""
    text = resources.files(__name__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
