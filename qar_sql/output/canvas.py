"""The one way qar makes a matplotlib figure: a bare ``Figure`` on the Agg canvas.

pyplot is process-wide state — its backend and its list of open figures. ``matplotlib.use("Agg")``
switched a notebook's backend for the rest of the session, so after ``to_html()`` or
``eliminate.plot()`` the user's ``plt.show()`` showed nothing. A figure made here is
known to no pyplot manager, needs no ``close``, and saves to PNG or SVG from any thread.
"""

from __future__ import annotations

# The figure itself is made in qar_sql/plots.py, below the result types whose .plot(ax=None)
# draws on it; the output modules keep importing it from here.
from qar_sql.plots import new_figure

__all__ = ["new_figure"]
