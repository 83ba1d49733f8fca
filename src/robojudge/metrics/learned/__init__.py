"""Model-backed metrics: networks loaded through robojudge.models, imported lazily.

Importing this package registers nothing: the metric modules in it (``hf_*``, ``tv*``) are listed in
:data:`robojudge.registry.BUILTIN_MODULES` and imported by the metric registry before its first lookup.
Each imports torch, transformers and pyiqa only inside the functions that run a network.
"""
