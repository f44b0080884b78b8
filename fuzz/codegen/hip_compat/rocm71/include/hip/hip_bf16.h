// Stand-in (builds_gfx950 with packaged HIP < 6 headers): ROCm 7.1's hip/hip_bf16.h, which includes the
// AMD implementation. Written here from the facts of ROCm 7.1's public headers, not copied.
#pragma once
#include <hip/amd_detail/amd_hip_bf16.h>
