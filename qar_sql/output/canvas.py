"""The one way qar makes a matplotlib figure: a bare ``Figure`` on the Agg canvas.

pyplot is process-wide state — its backend and its list of open figures. ``matplotlib.use("Agg")``
switched a notebook's backend for the rest of the session, so after ``to_html()`` or
``eliminate.plot()`` the user's ``plt.show()`` showed nothing (issue 31). A figure made here is
known to no pyplot manager, needs no ``close``, and saves to PNG or SVG from any thread.
"""

from __future__ import annotations

from typing import Any

from qar_sql.extras import require


def new_figure(what: str, **kwargs: Any) -> Any:
    """A ``matplotlib.figure.Figure`` (``kwargs`` as its constructor takes them) drawn by the Agg
    canvas; without matplotlib (``qar-sql[plot]``), UsageError: "``what`` needs matplotlib, …"."""
    require("plot", what)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    return fig
