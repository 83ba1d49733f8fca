"""The RoboPhys-3D metrics (50 ids of the paper's taxonomy) plus simulator task success.

Computed here without weights: ``iq1_psnr``, ``iq1_ssim`` (:mod:`.reference`),
``mq_temporal_flickering``, ``mq_dynamic_degree``, ``mq_flow_score`` (:mod:`.motion`),
``cs_collision_count`` and the non-taxonomy ``sim_task_success`` (:mod:`.state`),
``cc_photometric``, ``ctg_camera_control``, ``rbg_stability`` (:mod:`.geometry`), ``sa_bleu``
(:mod:`.text`), the tracking metrics ``ta_hsd``, ``ta_ndtw``, ``ta_dyn``, ``ol_average_precision``,
``ol_average_recall`` (:mod:`.tracking`). The reprojection metrics (:mod:`.rbg_reprojection`) and the
model metrics of :mod:`robojudge.metrics.learned` load networks. The judge and external ids are
registered by :mod:`.catalog`, which says where their values come from.

Importing this package registers nothing; the metric registry imports the modules listed in
:data:`robojudge.registry.BUILTIN_MODULES`.
"""
