"""Every network robojudge loads, as a :class:`WeightSpec`: the one catalogue of ``robojudge weights list``.

This module only declares; importing it registers the specs (it is listed under ``"weights"`` in
:data:`robojudge.registry.BUILTIN_MODULES`, so the weights registry imports it before its first
lookup). The loaders live in the other ``robojudge.models`` modules and name a spec from here.

Revisions: where no commit hash of a hub repository could be verified while writing this module, the
spec is unpinned (``revision=None``) and says so in ``robojudge weights list``; the resolver then takes
the newest snapshot found in the hub cache. Pin one by editing its spec once a hash is checked against
the hub. Files published outside the hub (torchvision's, OpenAI's) are pinned by a SHA-256.
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
        requires=("config.json",),
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
        requires=("model.safetensors",),
        how=(
            "RoboPhys-3D App. B.2.1 names DA3 without a size; DA3-BASE is robojudge's choice. The folder "
            "holds config.json (model_name) and model.safetensors. The network code comes from "
            "`pip install --no-deps depth-anything-3==0.1.1` plus omegaconf, addict and einops."
        ),
        metrics=("rbg_reprojection_geometric", "rbg_reprojection_photometric"),
    )
)


#: VGGT-1B (Wang et al., CVPR 2025), read into robojudge's port: the stand-in for RoboWorM's VGGT-Omega.
#: The revision is the one two public projects pin for this file (with its size, 5,026,874,952 bytes);
#: it was not checked against the hub from here (no network).
VGGT_1B = register_weights(
    WeightSpec(
        name="vggt_1b",
        unverified=True,
        repo_id="facebook/VGGT-1B",
        revision="860abec7937da0a4c03c41d3c269c366e82abdf9",
        filename="model.pt",
        also=("model.safetensors",),
        description="VGGT-1B: feed-forward multi-view reconstruction (camera poses, depth, world points; "
                    "checkpoint CC BY-NC 4.0, non-commercial)",
        library="torch",
        how=(
            "RoboWorM (Fig. 3b) names VGGT-Omega for RIGIS, another network (RoboPhys-3D Table 10); "
            "VGGT-1B stands in for it. robojudge builds the network itself (torch "
            "only) and loads model.pt strictly, dropping only the tracking head's track_head.* keys; a "
            "model.safetensors from the same repository in the folder works too. The checkpoint is licensed "
            "for non-commercial use only (facebook/VGGT-1B-Commercial is a separate, gated file)."
        ),
        metrics=("rigis_vggt", "rigis_vggt_geo", "rigis_vggt_pose"),
    )
)


# --- networks built by torchvision, pyiqa, lpips, TorchScript and robojudge's own ports -----------

_TV = "https://download.pytorch.org/models/"


def _torchvision_how(filename: str) -> str:
    return (
        f"torchvision publishes it outside the Hugging Face hub, at {_TV}{filename}; `robojudge weights "
        "fetch` downloads that address, or copy the file there by hand"
    )


#: MUSIQ trained on SPAQ, as pyiqa publishes it (RoboJudge App. B.3: "MUSIQ-SPAQ").
MUSIQ_SPAQ = register_weights(
    WeightSpec(
        name="musiq_spaq",
        unverified=True,
        repo_id="chaofengc/IQA-PyTorch-Weights",
        revision=None,
        filename="musiq_spaq_ckpt-358bb6af.pth",
        description="MUSIQ image-quality transformer trained on SPAQ (pyiqa checkpoint)",
        library="pyiqa",
        metrics=("musiq_spaq", "iq1_musiq"),
    )
)

#: OpenAI's CLIP RN50, the TorchScript file the openai-clip package downloads; the URL's folder name is
#: the file's SHA-256. CLIP-IQA's backbone (RoboPhys-3D App. B.1.2), loaded by pyiqa (models._clipiqa).
_CLIP_RN50_SHA256 = "afeb0e10f9e5a86da6080e35cf09123aca3b358a0c3e3b6c78a7b63bc04b6762"
CLIP_RN50_OPENAI = register_weights(
    WeightSpec(
        name="clip_rn50_openai",
        unverified=True,
        repo_id=None,
        revision=None,
        filename="RN50.pt",
        url=f"https://openaipublic.azureedge.net/clip/models/{_CLIP_RN50_SHA256}/RN50.pt",
        sha256=_CLIP_RN50_SHA256,
        description="CLIP RN50 image and text encoders (OpenAI's TorchScript release)",
        library="pyiqa",
        how=(
            "OpenAI publishes it outside the Hugging Face hub; `robojudge weights fetch` downloads it and "
            "checks its SHA-256. A copy that openai-clip or pyiqa already downloaded (~/.cache/clip/RN50.pt "
            "or ~/.cache/torch/hub/clip/RN50.pt) is the same file"
        ),
        metrics=("aq_clip_iqa",),
    )
)

#: RAFT-large trained on FlyingChairs + FlyingThings (torchvision's port of the paper's raft-things.pth).
RAFT_THINGS = register_weights(
    WeightSpec(
        name="raft_things",
        repo_id=None,
        revision=None,
        filename="raft_large_C_T_V1-22a6c225.pth",
        url=f"{_TV}raft_large_C_T_V1-22a6c225.pth",
        description="RAFT-large optical flow, Chairs+Things (torchvision C_T_V1)",
        library="torchvision",
        how=_torchvision_how("raft_large_C_T_V1-22a6c225.pth"),
        metrics=("flow_motion_magnitude_raft",),
    )
)

#: torchvision's ImageNet VGG-16; LPIPS-VGG's backbone and the Gram-matrix style features.
VGG16_IMAGENET = register_weights(
    WeightSpec(
        name="vgg16_imagenet",
        repo_id="ByteDance/LatentSync-1.6",
        revision="c42c7e6c8e9c213626389fa7d9a3c444b8536353",
        filename="auxiliary/vgg16-397923af.pth",
        description="VGG-16 ImageNet classifier (torchvision file vgg16-397923af.pth)",
        library="torchvision",
        how=f"the same file is torchvision's {_TV}vgg16-397923af.pth; either copy works",
        metrics=("iq1_lpips", "cc_style"),
    )
)

#: torchvision's ImageNet Inception-v3 (1000 classes) for the Inception Score.
INCEPTION_V3 = register_weights(
    WeightSpec(
        name="inception_v3_imagenet",
        repo_id=None,
        revision=None,
        filename="inception_v3_google-0cc3c7bd.pth",
        url=f"{_TV}inception_v3_google-0cc3c7bd.pth",
        description="Inception-v3 ImageNet classifier (torchvision IMAGENET1K_V1)",
        library="torchvision",
        how=_torchvision_how("inception_v3_google-0cc3c7bd.pth"),
        metrics=("iq1_inception_score",),
    )
)

#: The Kinetics-400 I3D as a TorchScript file (the StyleGAN-V export used by most PyTorch FVD code).
I3D_TORCHSCRIPT = register_weights(
    WeightSpec(
        name="i3d_torchscript",
        unverified=True,
        repo_id="ByteDance/LatentSync-1.6",
        revision="c42c7e6c8e9c213626389fa7d9a3c444b8536353",
        filename="auxiliary/i3d_torchscript.pt",
        description="I3D Kinetics-400 video classifier, TorchScript (FVD features)",
        library="torchscript",
        how=(
            "any TorchScript file with forward(x, rescale: bool, resize: bool, return_features: bool) taking "
            "(N, 3, T, 224, 224) in [-1, 1] and returning (N, 400) features works (see docs/metrics.md)"
        ),
        metrics=("iq1_fvd",),
    )
)

#: A video frame-interpolation network exported to TorchScript (VBench uses AMT-S).
FRAME_INTERPOLATION = register_weights(
    WeightSpec(
        name="frame_interpolation",
        unverified=True,
        repo_id=None,
        revision=None,
        filename="frame_interpolation.pt",
        description="video frame-interpolation network, TorchScript (AMT-S in VBench)",
        library="torchscript",
        manual=(
            "export a TorchScript file to $ROBOJUDGE_WEIGHTS/frame_interpolation/frame_interpolation.pt "
            "(contract and how: docs/metrics.md, mq_motion_smoothness)"
        ),
        how=(
            "VBench uses AMT-S, published only as a plain checkpoint (amt-s.pth in hf://lalala125/AMT); "
            "export it, or any interpolation network, with forward(frame0, frame1) -> middle frame, all "
            "(N, 3, H, W) in [0, 1], H and W multiples of 16"
        ),
        metrics=("mq_motion_smoothness",),
    )
)


#: ViCLIP ViT-L/14 trained on InternVid-10M-FLT, the video-text model of VBench's overall consistency,
#: which RoboPhys-3D App. B.1 reports as Semantics Consistency. Built by robojudge.models._viclip_net.
VICLIP_L14_INTERNVID = register_weights(
    WeightSpec(
        name="viclip_l14_internvid",
        unverified=True,
        repo_id="OpenGVLab/ViCLIP",
        revision=None,
        filename="ViClip-InternVid-10M-FLT.pth",
        description="ViCLIP ViT-L/14 video and text encoders (InternVid-10M-FLT)",
        library="viclip",
        how=(
            "VBench loads the same file as third_party/ViCLIP/ViClip-InternVid-10M-FLT.pth; its 'model' "
            "entry is the state dict"
        ),
        metrics=("cc_semantics",),
    )
)
