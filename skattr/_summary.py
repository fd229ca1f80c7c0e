"""A release's report in the layout of statsmodels' ``summary()``.

Its own module so that importing skattr imports no statsmodels: a release's
``summary()`` imports it when first asked.
"""

from __future__ import annotations

import html
import textwrap

import pandas as pd
from statsmodels.iolib.summary import Summary as _StatsmodelsSummary
from statsmodels.iolib.summary import summary_return
from statsmodels.iolib.table import SimpleTable

__all__ = ["Summary"]


class Summary(_StatsmodelsSummary):
    """A release's report in the layout of statsmodels' ``summary()``.

    The guarantee in plain words (what is hidden, the odds factor, delta,
    what it rests on, what it covers), then two tables: one row per
    statistic (value, noise sd and interval; a plan has no value), then the
    technical certificate (mechanism, guarantee, Theta, noise, method and
    assumptions). ``str``/``print`` give the text, ``as_html()``
    the HTML (every cell escaped), ``as_text()``, ``as_latex()`` and
    ``as_csv()`` the other formats of statsmodels.

    Attributes
    ----------
    title : str
    plain : str
        The guarantee in plain words, the report's opening.
    table : DataFrame
        The first table: one row per statistic, its cells as printed.
    certificate : list of (str, str)
        The second table's rows: what, and its value.
    tables : list of statsmodels.iolib.table.SimpleTable
    """

    def __init__(self, title: str, columns, stubs, rows, certificate,
                 plain: str = ""):
        super().__init__()
        self.title = title
        self.plain = plain
        self._parts = (list(columns), list(stubs), list(rows), list(certificate))
        self.table = pd.DataFrame(list(rows), columns=list(columns),
                                  index=list(stubs))
        self.certificate = list(certificate)
        self.tables = self._tables(str)

    def _tables(self, cell, wrap: int | None = None) -> list:
        columns, stubs, rows, certificate = self._parts
        fmt = {"data_aligns": "l" * len(columns), "header_align": "l"}
        if wrap is not None:
            # Text: long values continue on rows of their own.
            certificate = [(k if i == 0 else "", part)
                           for k, v in certificate
                           for i, part in enumerate(textwrap.wrap(v, wrap) or [""])]
        return [
            SimpleTable([[cell(v) for v in row] for row in rows],
                        headers=[cell(c) for c in columns],
                        stubs=[cell(s) for s in stubs], title=cell(self.title),
                        txt_fmt=fmt),
            SimpleTable([[cell(v)] for _, v in certificate],
                        stubs=[cell(k) for k, _ in certificate],
                        title=cell("Certificate"),
                        txt_fmt={**fmt, "data_aligns": "l"}),
        ]

    def as_text(self) -> str:
        """Return the tables as text, long values wrapped at 70 characters."""
        text = summary_return(self._tables(str, wrap=70), return_fmt="text")
        lines = [line.rstrip() for line in text.splitlines()]
        if self.plain:
            # Unbroken at hyphens: 'dp-laplace' is a name to type.
            lines = [*textwrap.wrap(self.plain, 80, break_on_hyphens=False),
                     "", *lines]
        return "\n".join(lines)

    def as_latex(self) -> str:
        """Return the plain words, then the tables as LaTeX tabulars."""
        tables = "\n".join(t.as_latex_tabular() for t in self._tables(str))
        return f"{self.plain}\n\n{tables}" if self.plain else tables

    def as_html(self) -> str:
        """Return the tables as HTML, every label and value escaped."""
        tables = summary_return(self._tables(html.escape), return_fmt="html")
        if not self.plain:
            return tables
        return f"<p>{html.escape(self.plain)}</p>\n{tables}"

    def _repr_html_(self) -> str:
        return self.as_html()

    def __contains__(self, text: str) -> bool:
        """Return whether ``text`` appears in the report, wrapped lines joined."""
        return " ".join(text.split()) in " ".join(self.as_text().split())


