"""Model-backed metrics: networks loaded through robojudge.models, imported lazily."""
