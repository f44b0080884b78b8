"""What the tier stood in for, as report lines, from the report's ``cpu_tier`` (plugin.tier_notes_json): the
terminal table, the merged table of an xdist run and the HTML page print the same lines, so a verdict that says
"its HIP did not run here (the hip lines say why)" finds them wherever it is read."""
from __future__ import annotations


def lines(cpu_tier: dict) -> list:
    notes = cpu_tier or {}
    out = []
    if notes.get("device_emulated"):
        out.append("device      CUDA device stood in by the CPU (tensors on 'cuda' live on the CPU; "
                   "torch.cuda answers as on an MI355X)")
    for kernel, k in (notes.get("autotune") or {}).items():
        out.append(f"autotune    {kernel}: configs checked {sorted(k['checked'])} of {len(k['configs'])}")
    hip = notes.get("hip_cpu") or {}
    if hip.get("launches"):
        out.append(f"hip         the file's own HIP served {hip['calls']} calls ({hip['launches']} kernel launches), run "
                   "on the CPU model of gfx950 (reference/emulation/hip_cpu), not a fallback")
    for where, how in (notes.get("torch_version") or {}).items():
        out.append(f"torch       {where}: {how}")
    for what, how in (notes.get("hip_code_objects") or {}).items():
        out.append(f"hip         {what}: {how[:300]}")
    for what, why in (notes.get("hip_not_run") or {}).items():
        out.append(f"hip         did not run here: {what}: {why[:300]}")
    for name, why in (notes.get("aiter_not_run") or {}).items():
        out.append(f"aiter       did not run here: {name}: {why}; the file caught the error and went on")
    if notes.get("hip_fallback"):
        out.append(f"{'hip' if notes.get('hip_not_run') else 'aiter':<11} {notes['hip_fallback']}")
    for shim, where in (notes.get("compat_shims") or {}).items():
        out.append(f"compat      {shim} at {where}: accepted as the runner's Triton did (triton 3.9 rejects it)")
    return out
