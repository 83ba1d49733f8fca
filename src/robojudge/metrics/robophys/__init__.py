"""The RoboPhys-3D metrics (50 ids of the paper's taxonomy) plus simulator task success.

Computed here without weights: ``iq1_psnr``, ``iq1_ssim`` (:mod:`.reference`),
``mq_temporal_flickering``, ``mq_dynamic_degree``, ``mq_flow_score`` (:mod:`.motion`),
``cs_collision_count`` and the non-taxonomy ``sim_task_success`` (:mod:`.state`). Every other
taxonomy id is registered by :mod:`.catalog` with the provider that produces it.
"""
