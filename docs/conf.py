"""Sphinx configuration of skattr's documentation."""

import importlib.util

project = "skattr"
author = "skattr developers"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]
if importlib.util.find_spec("myst_parser"):
    extensions.append("myst_parser")
if importlib.util.find_spec("sphinx_gallery"):
    extensions.append("sphinx_gallery.gen_gallery")
    sphinx_gallery_conf = {
        "examples_dirs": "../examples",
        "gallery_dirs": "auto_examples",
        "filename_pattern":
            r"/(hospital|attack_gridsearch|group_dp_comparison|schools|many_releases"
            r"|hospital_plots)\.py",
        # Its page of run times loads scripts from outside the repository.
        "write_computation_times": False,
    }
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
numpydoc_show_class_members = False
autosummary_generate = True
# Classes list their documented methods and properties in full; the fields
# are in each docstring's Attributes section.
templates_path = ["_templates"]
autodoc_member_order = "groupwise"
html_theme = "alabaster"
exclude_patterns = ["_build"]
