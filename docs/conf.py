"""Sphinx configuration of admmcheck's documentation site.

Built with warnings as errors by ``.ci/run`` (``sphinx-build -W --keep-going -b html docs docs/_build/html``, the
command README.md gives). The pages are Markdown read by MyST, the API reference is generated from the docstrings
by autodoc from the installed package.
"""

from admmcheck import __version__

project = "admmcheck"
author = "the admmcheck developers"
copyright = "2026, the admmcheck developers"
release = version = __version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.mathjax"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"

html_theme = "alabaster"
html_theme_options = {"description": "verify differentially private distributed optimization", "fixed_sidebar": True}
html_sidebars = {"**": ["about.html", "navigation.html", "searchbox.html"]}


def setup(app):
    """The worked examples write CSV files in ```csv blocks; Pygments has no CSV lexer, so they are shown as text."""
    from pygments.lexers.special import TextLexer

    app.add_lexer("csv", TextLexer)
