"""The networks robojudge loads with transformers, each pinned to its Hugging Face repository.

Revisions: no commit hash of these repositories could be verified while writing this module, so
each spec is unpinned (``revision=None``) and says so in ``robojudge weights list``; the resolver
then takes the newest snapshot found in the hub cache. Pin one by editing its spec once a hash is
checked against the hub.
"""

from __future__ import annotations

from robojudge.models._weights import WeightSpec, register_weights

CLIP_B32 = register_weights(
    WeightSpec(
        name="clip_vit_b32",
        repo_id="openai/clip-vit-base-patch32",
        revision=None,
        description="CLIP ViT-B/32 (image and text encoders, with its image processor and tokenizer)",
        library="transformers",
        how="RoboJudge App. B.3 uses CLIP ViT-B/32; so does CLIPScore, which sa_clip follows.",
        metrics=("clip_frame_consistency", "cc_background", "cc_subject", "sa_clip"),
    )
)

DINO_B16 = register_weights(
    WeightSpec(
        name="dino_vit_b16",
        repo_id="facebook/dino-vitb16",
        revision=None,
        description="DINO ViT-B/16 self-supervised image encoder",
        library="transformers",
        how="RoboJudge App. B.3 uses DINO ViT-B/16.",
    )
)

VJEPA2_G = register_weights(
    WeightSpec(
        name="vjepa2_vitg_ssv2",
        repo_id="facebook/vjepa2-vitg-fpc64-384-ssv2",
        revision=None,
        description="V-JEPA 2 ViT-g video encoder (the SSv2 checkpoint; only the encoder is used)",
        library="transformers",
        how="RoboJudge App. B.3 names this checkpoint (vjepa2-vitg-fpc64-384-ssv2); it is about 4 GB.",
    )
)

DEPTH_ANYTHING_V2_S = register_weights(
    WeightSpec(
        name="depth_anything_v2_small",
        repo_id="depth-anything/Depth-Anything-V2-Small-hf",
        revision=None,
        description="Depth Anything V2 Small monocular (relative) depth estimator",
        library="transformers",
        how="RoboPhys-3D App. B.2.2 does not name its depth model; this is robojudge's choice.",
    )
)

DINOV2_B14 = register_weights(
    WeightSpec(
        name="dinov2_vit_b14",
        repo_id="facebook/dinov2-base",
        revision=None,
        description="DINOv2 ViT-B/14 self-supervised image encoder",
        library="transformers",
        how="RoboPhys-3D App. B.1.5 uses DINOv2 features for subject consistency.",
    )
)

CLIP_L14 = register_weights(
    WeightSpec(
        name="clip_vit_l14",
        repo_id="openai/clip-vit-large-patch14",
        revision=None,
        description="CLIP ViT-L/14 (image and text encoders, with its image processor)",
        library="transformers",
        how=(
            "The LAION aesthetic predictor and the CLIP+MLP aesthetic predictor (RoboPhys-3D App. B.1.2, "
            "LAION-AP and CLIP-AP) read CLIP ViT-L/14 embeddings."
        ),
        metrics=("aq_laion_ap", "aq_clip_ap"),
    )
)

LAION_AESTHETIC_LINEAR = register_weights(
    WeightSpec(
        name="laion_aesthetic_linear_l14",
        unverified=True,
        repo_id=None,
        revision=None,
        filename="sa_0_4_vit_l_14_linear.pth",
        url="https://github.com/LAION-AI/aesthetic-predictor/raw/main/sa_0_4_vit_l_14_linear.pth",
        description="LAION aesthetic predictor v1: linear head (768 -> 1) on unit CLIP ViT-L/14 embeddings",
        library="torch",
        how="A plain state dict (weight, bias) from LAION-AI/aesthetic-predictor; no checksum is pinned.",
        metrics=("aq_laion_ap",),
    )
)

CLIP_MLP_AESTHETIC = register_weights(
    WeightSpec(
        name="clip_mlp_aesthetic_l14",
        unverified=True,
        repo_id=None,
        revision=None,
        filename="sac+logos+ava1-l14-linearMSE.pth",
        url=(
            "https://github.com/christophschuhmann/improved-aesthetic-predictor/raw/main/"
            "sac%2Blogos%2Bava1-l14-linearMSE.pth"
        ),
        description="CLIP+MLP aesthetic predictor: MLP 768-1024-128-64-16-1 on unit CLIP ViT-L/14 embeddings",
        library="torch",
        how=(
            "A plain state dict (layers.{0,2,4,6,7}.weight/bias) from christophschuhmann/"
            "improved-aesthetic-predictor; robojudge's reading of RoboPhys-3D's CLIP-AP [56]. "
            "No checksum is pinned."
        ),
        metrics=("aq_clip_ap",),
    )
)

QWEN2_VL_7B_INSTRUCT = register_weights(
    WeightSpec(
        name="qwen2_vl_7b_instruct",
        unverified=True,
        repo_id="Qwen/Qwen2-VL-7B-Instruct",
        revision=None,
        description=(
            "Qwen2-VL-7B-Instruct configuration, tokenizer, chat template and image processor (HPSv3's base; "
            "its weight shards are not read)"
        ),
        library="transformers",
        how=(
            "HPSv3 reads only config.json, the tokenizer files, the chat template and "
            "preprocessor_config.json from this repository: copying those (without the *.safetensors "
            "shards, about 16 GB) to the folder is enough; `robojudge weights fetch` downloads all of it."
        ),
        metrics=("aq_hpsv3",),
    )
)

HPSV3 = register_weights(
    WeightSpec(
        name="hpsv3",
        unverified=True,
        repo_id="MizzenAI/HPSv3",
        revision=None,
        filename="HPSv3.safetensors",
        description=(
            "HPSv3 human-preference reward model: fine-tuned Qwen2-VL-7B with a 2-output ranknet head "
            "(mu, sigma)"
        ),
        library="transformers",
        how=(
            "The whole fine-tuned model (about 16 GB, bfloat16) with transformers 4.45 key names; robojudge "
            "maps them onto transformers 5 (robojudge.models._hpsv3); it needs qwen2_vl_7b_instruct too."
        ),
        metrics=("aq_hpsv3",),
    )
)

DA3_BASE = register_weights(
    WeightSpec(
        name="da3_base",
        unverified=True,
        repo_id="depth-anything/DA3-BASE",
        revision=None,
        description="Depth Anything 3 Base: joint multi-view depth, camera poses and intrinsics (Apache-2.0)",
        library="depth_anything_3",
        how=(
            "RoboPhys-3D App. B.2.1 names DA3 without a size; DA3-BASE is robojudge's choice. The folder "
            "holds config.json (model_name) and model.safetensors. The network code comes from "
            "`pip install --no-deps depth-anything-3==0.1.1` plus omegaconf, addict and einops."
        ),
        metrics=("rbg_reprojection_geometric", "rbg_reprojection_photometric"),
    )
)
