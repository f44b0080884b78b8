// Stand-in (builds_gfx950 with packaged HIP < 6 headers): ROCm 7.1 moved the legacy hip_bfloat16 (public
// `data`, explicit float constructor, round to nearest even) here; the packaged headers have it as
// hip/hip_bfloat16.h, which this includes.
#pragma once
#include <hip/hip_bfloat16.h>
