#!/usr/bin/env python3
"""List tensors in a checkpoint without executing code from it."""
import sys
from pathlib import Path


def show(name, shape, dtype):
    print(f"{name:50} {str(tuple(shape)):20} {dtype}")


def main(p: Path) -> None:
    suffix = p.suffix.lower()
    if suffix == ".safetensors":
        from safetensors import safe_open
        with safe_open(str(p), framework="numpy") as f:
            for k in f.keys():
                t = f.get_slice(k)
                show(k, t.get_shape(), t.get_dtype())
    elif suffix in (".npy", ".npz"):
        import numpy as np
        data = np.load(p, allow_pickle=False)
        items = data.items() if suffix == ".npz" else [("array", data)]
        for k, v in items:
            show(k, v.shape, v.dtype)
    elif suffix in (".pt", ".pth", ".bin"):
        import torch
        try:
            sd = torch.load(p, map_location="cpu", weights_only=True)
        except Exception as e:  # noqa: BLE001
            sys.exit(f"refused: {p.name} needs full unpickling ({type(e).__name__}); ask the user")
        for k, v in (sd.items() if isinstance(sd, dict) else []):
            if hasattr(v, "shape"):
                show(k, v.shape, v.dtype)
    elif suffix == ".pkl":
        sys.exit("refused: pickle files can run code when loaded; ask for safetensors")
    else:
        sys.exit(f"unknown format {suffix}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
