"""Suite manifests: one item per generated rollout."""

from robojudge.suite._schema import CHECKLIST_ITEMS, Checklist, Embodiment, Item, Labels

__all__ = ["CHECKLIST_ITEMS", "Checklist", "Embodiment", "Item", "Labels"]
